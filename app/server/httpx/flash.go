package httpx

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Every dashboard form posts, then redirects to a page (post/redirect/
// get), so reloading that page repeats nothing. What the page must show
// once after the post (a notice, a secret shown only once) travels in a
// Flash: a short-lived HttpOnly cookie scoped to the page's path, read
// and cleared by the page. The secret goes to the browser either way; the
// cookie keeps it off the URL and out of any log.
const (
	flashCookie = "ductor_flash"
	flashMaxAge = 120 // seconds
)

// Flash is what a post hands the page it redirects to.
type Flash struct {
	Notice string `json:"notice,omitempty"`
	// ID and Secret are a secret shown once and what it belongs to.
	ID     string `json:"id,omitempty"`
	Secret string `json:"secret,omitempty"`
}

// SetFlash hands f to the page at tenantPath (under /t/{tenant}).
func SetFlash(c echo.Context, tenantPath string, f Flash) {
	raw, _ := json.Marshal(f)
	c.SetCookie(&http.Cookie{
		Name: flashCookie, Value: base64.RawURLEncoding.EncodeToString(raw), Path: flashPath(c, tenantPath),
		MaxAge: flashMaxAge, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: SiteOf(c).SecureCookies,
	})
}

// TakeFlash reads and clears the page's flash, if any.
func TakeFlash(c echo.Context, tenantPath string) (Flash, bool) {
	ck, err := c.Cookie(flashCookie)
	if err != nil || ck.Value == "" {
		return Flash{}, false
	}
	c.SetCookie(&http.Cookie{
		Name: flashCookie, Value: "", Path: flashPath(c, tenantPath), MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: SiteOf(c).SecureCookies,
	})
	raw, err := base64.RawURLEncoding.DecodeString(ck.Value)
	var f Flash
	if err != nil || json.Unmarshal(raw, &f) != nil {
		return Flash{}, false
	}
	return f, true
}

func flashPath(c echo.Context, tenantPath string) string {
	return "/t/" + ViewerOf(c).Tenant.Slug + tenantPath
}
