package httpx

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

func TestRequireScope(t *testing.T) {
	t.Parallel()
	e := echo.New()
	e.HTTPErrorHandler = ErrorHandler(slog.New(slog.DiscardHandler))
	h := RequireScope(auth.ScopeRunsWrite)(func(c echo.Context) error { return c.NoContent(204) })
	for _, tc := range []struct {
		scopes []auth.Scope
		want   int
	}{
		{[]auth.Scope{auth.ScopeRunsRead}, 403},
		{[]auth.Scope{auth.ScopeRunsWrite}, 204},
		{[]auth.Scope{auth.ScopeAdmin}, 204},
	} {
		rec := httptest.NewRecorder()
		c := e.NewContext(httptest.NewRequest("POST", "/", nil), rec)
		c.Set(principalKey, Principal{Key: store.APIKey{Scopes: tc.scopes}})
		if err := h(c); err != nil {
			e.HTTPErrorHandler(err, c)
		}
		if rec.Code != tc.want {
			t.Errorf("scopes %v: %d, want %d", tc.scopes, rec.Code, tc.want)
		}
	}
}
