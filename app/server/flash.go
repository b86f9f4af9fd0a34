package server

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Every dashboard form posts, then redirects to a page (post/redirect/
// get), so reloading that page repeats nothing. What the page must show
// once after the post (a notice, a secret shown only once) travels in a
// flash: a short-lived HttpOnly cookie scoped to the page's path, read
// and cleared by the page. The secret goes to the browser either way; the
// cookie keeps it off the URL and out of any log.
const (
	flashCookie = "ductor_flash"
	flashMaxAge = 120 // seconds
)

// flash is what a post hands the page it redirects to.
type flash struct {
	Notice string `json:"notice,omitempty"`
	// ID and Secret are a secret shown once and what it belongs to.
	ID     string `json:"id,omitempty"`
	Secret string `json:"secret,omitempty"`
}

// setFlash hands f to the page at tenantPath (under /t/{tenant}).
func setFlash(c echo.Context, tenantPath string, f flash) {
	raw, _ := json.Marshal(f)
	c.SetCookie(&http.Cookie{
		Name: flashCookie, Value: base64.RawURLEncoding.EncodeToString(raw), Path: flashPath(c, tenantPath),
		MaxAge: flashMaxAge, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: siteOf(c).SecureCookies,
	})
}

// takeFlash reads and clears the page's flash, if any.
func takeFlash(c echo.Context, tenantPath string) (flash, bool) {
	ck, err := c.Cookie(flashCookie)
	if err != nil || ck.Value == "" {
		return flash{}, false
	}
	c.SetCookie(&http.Cookie{
		Name: flashCookie, Value: "", Path: flashPath(c, tenantPath), MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: siteOf(c).SecureCookies,
	})
	raw, err := base64.RawURLEncoding.DecodeString(ck.Value)
	var f flash
	if err != nil || json.Unmarshal(raw, &f) != nil {
		return flash{}, false
	}
	return f, true
}

func flashPath(c echo.Context, tenantPath string) string {
	return "/t/" + viewerOf(c).Tenant.Slug + tenantPath
}
