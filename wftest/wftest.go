// Package wftest tests Ductor workflow definitions from Go: it runs a
// definition in memory, deterministically and in virtual time, with
// mocked step results, exactly as `ductor test` runs *.test.yaml files
// (docs/testing.md). It needs no database and no server.
//
// It takes definitions as JSON or YAML bytes, which is what the Go SDK's
// values marshal to (json.Marshal of a sdk.Definition), so the SDK itself
// does not depend on the engine:
//
//	def, _ := json.Marshal(sdk.Definition{Key: "orders", Steps: ...})
//	wftest.Run(t, def, wftest.Case{
//		Input: map[string]any{"amount": 120},
//		Mocks: map[string]wftest.MockList{"charge": {{Output: map[string]any{"status": 200}}}},
//		Expect: &wftest.Expect{Status: "succeeded"},
//	})
package wftest

import (
	"context"
	"sync"
	"testing"

	"github.com/ductor/ductor/app/wftest"
)

// The types of a test case, as in a *.test.yaml file.
type (
	Case           = wftest.Case
	Mock           = wftest.Mock
	MockList       = wftest.MockList
	MockError      = wftest.MockError
	Delivery       = wftest.Delivery
	Expect         = wftest.Expect
	Outcome        = wftest.Outcome
	SignalDelivery = wftest.SignalDelivery
	EventDelivery  = wftest.EventDelivery
	ApprovalInput  = wftest.ApprovalInput
	CaseInput      = wftest.CaseInput
)

// Run compiles def (a definition document, JSON or YAML) and runs c from
// the case's start (default 2026-01-01T00:00:00Z), failing t with a line
// per difference from c.Expect (when set). It returns the outcome for
// further checks.
func Run(t testing.TB, def []byte, c Case) *Outcome {
	t.Helper()
	x, err := runner(t).RunDoc(context.Background(), def, c)
	if err == nil {
		err = x.Err
	}
	if err != nil {
		t.Fatalf("wftest: %v", err)
	}
	if c.Expect != nil {
		for _, line := range x.Failures {
			t.Error(line)
		}
	}
	return x.Outcome
}

// RunFile runs every case of a *.test.yaml file as a subtest.
func RunFile(t *testing.T, path string) {
	t.Helper()
	f, err := wftest.Load(path)
	if err != nil {
		t.Fatalf("wftest: %v", err)
	}
	res, err := runner(t).RunFile(context.Background(), f, nil)
	if err != nil {
		t.Fatalf("wftest: %s: %v", path, err)
	}
	for _, x := range res {
		t.Run(x.Name, func(t *testing.T) {
			if x.Err != nil {
				t.Fatal(x.Err)
			}
			for _, line := range x.Failures {
				t.Error(line)
			}
		})
	}
}

var shared = sync.OnceValues(wftest.NewRunner)

func runner(t testing.TB) *wftest.Runner {
	t.Helper()
	r, err := shared()
	if err != nil {
		t.Fatalf("wftest: %v", err)
	}
	return r
}
