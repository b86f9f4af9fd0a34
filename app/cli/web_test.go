package cli

import (
	"context"
	"testing"

	"github.com/ductor/ductor/app/config"
)

// The dev login exists only in dev, on a loopback address, without OIDC
// settings: serve never offers it.
func TestDevLoginOnlyInDevOnLoopback(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dev  bool
		addr string
		want bool
	}{
		{true, "127.0.0.1:8080", true},
		{true, "[::1]:8080", true},
		{true, "10.0.0.5:8080", false},
		{false, "127.0.0.1:8080", false},
	}
	for _, tc := range cases {
		p := process{cfg: config.Config{Roles: config.AllRoles}, dev: tc.dev}
		w, err := p.web(context.Background(), tc.addr)
		if err != nil || w.DevLogin != tc.want || w.Login != nil {
			t.Errorf("dev=%v on %s: %+v, %v; want dev login %v", tc.dev, tc.addr, w, err, tc.want)
		}
	}
}
