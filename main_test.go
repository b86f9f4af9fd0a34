package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Errors are one line prefixed "ductor: ", usage mistakes exit 2, help
// exits 0.
func TestErrorsArePrefixed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"frobnicate"}, 2, `ductor: unknown command "frobnicate"`},
		{[]string{"run", "get"}, 2, "ductor: want `ductor run get ID"},
		{[]string{"run", "get", "ID", "--bogus"}, 2, "ductor: flag provided but not defined: -bogus (see `ductor run get -h`)"},
		{[]string{"migrate", "--bogus"}, 2, "ductor: flag provided but not defined: -bogus"},
		{[]string{"run", "list"}, 1, "ductor: DUCTOR_API_KEY"},
		{[]string{"migrate"}, 1, "ductor: DATABASE_URL"},
		{[]string{"run", "-h"}, 0, ""},
		{[]string{"--version"}, 0, ""},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), c.args, func(string) string { return "" }, &out, &errOut)
		if code != c.code || !strings.HasPrefix(errOut.String(), c.err) || strings.Count(errOut.String(), "\n") > 1 {
			t.Errorf("ductor %v: exit %d, stderr %q; want %d and %q", c.args, code, errOut.String(), c.code, c.err)
		}
		if c.err == "" && errOut.Len() > 0 {
			t.Errorf("ductor %v wrote to stderr: %q", c.args, errOut.String())
		}
	}
}
