package cli

import (
	"context"
	"strings"

	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/login"
)

// webSetup is how the dashboard lets people in.
type webSetup struct {
	Login    *login.Provider
	DevLogin bool
	BaseURL  string
}

// web discovers the OIDC provider when one is configured. Without one,
// only dev on a loopback address offers the dev login; serve never does
// (it refuses to start the web role without OIDC settings).
func (p process) web(ctx context.Context, addr string) (webSetup, error) {
	w := webSetup{BaseURL: strings.TrimSuffix(p.cfg.BaseURL, "/")}
	if !p.cfg.Roles.Has(config.RoleWeb) {
		return w, nil
	}
	if !p.cfg.OIDCConfigured() {
		w.DevLogin = p.dev && requireLoopback(addr) == nil
		return w, nil
	}
	base := w.BaseURL
	if base == "" {
		base = "http://" + addr
	}
	lp, err := login.New(ctx, login.Config{
		Issuer: p.cfg.OIDCIssuer, ClientID: p.cfg.OIDCClientID, ClientSecret: p.cfg.OIDCClientSecret,
		RedirectURL: base + "/auth/callback",
	})
	if err != nil {
		return w, &config.Error{Setting: "OIDC_ISSUER", Problem: err.Error()}
	}
	w.Login = lp
	return w, nil
}
