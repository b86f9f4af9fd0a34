package cli

import (
	"context"
	"fmt"

	"github.com/ductor/ductor/app/version"
)

// runVersion prints `ductor VERSION (GO)`: the version app/version
// reports everywhere else too.
func runVersion(_ context.Context, env Env, args []string) error {
	if err := newFlags("version", env).Parse(args); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "ductor %s (%s)\n", version.String(), version.GoVersion())
	return nil
}
