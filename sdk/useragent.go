package sdk

import (
	"runtime"
	"runtime/debug"
)

// modulePath is the SDK's module, whose version the User-Agent names.
const modulePath = "github.com/ductor/ductor/sdk"

// userAgent is the User-Agent of every request, ductor-sdk-go/VERSION
// (GOVERSION; GOOS/GOARCH), VERSION being the SDK module's version in the
// program's build (devel when built from a work tree).
var userAgent = "ductor-sdk-go/" + moduleVersion() + " (" + runtime.Version() + "; " + runtime.GOOS + "/" + runtime.GOARCH + ")"

func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	for _, m := range info.Deps {
		if m.Path == modulePath {
			if m.Replace != nil && m.Replace.Version == "" {
				return "devel" // replaced by a directory
			}
			if m.Replace != nil {
				return m.Replace.Version
			}
			if m.Version != "" && m.Version != "(devel)" {
				return m.Version
			}
		}
	}
	return "devel"
}

// WithUserAgent puts product (NAME/VERSION of the program calling, say
// "billing/2.3") before the SDK's own User-Agent.
func WithUserAgent(product string) Option {
	return func(c *Client) {
		if product != "" {
			c.userAgent = product + " " + userAgent
		}
	}
}
