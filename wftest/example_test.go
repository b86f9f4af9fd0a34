package wftest_test

import (
	"encoding/json"
	"testing"

	"github.com/ductor/ductor/wftest"
)

// A definition built from values (here maps; the Go SDK's sdk.Definition
// marshals the same way), tested table-driven.
func TestChargeTable(t *testing.T) {
	t.Parallel()
	def, err := json.Marshal(map[string]any{
		"key": "charge",
		"steps": []any{
			map[string]any{"ref": "charge", "type": "http", "with": map[string]any{"url": "https://pay.example"},
				"retry": map[string]any{"max_attempts": 3, "initial_interval": "1s"}},
			map[string]any{"ref": "receipt", "type": "transform", "with": map[string]any{"expr": `{"paid": steps.charge.output.status == 200}`}},
		},
		"edges": []any{map[string]any{"from": "charge", "to": "receipt"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	declined := wftest.Mock{Error: &wftest.MockError{Code: "http_402"}}
	flaky := wftest.Mock{Error: &wftest.MockError{Code: "http_503", Retryable: true}}
	ok := wftest.Mock{Output: map[string]any{"status": 200}}
	for _, c := range []wftest.Case{
		{Name: "paid", Mocks: map[string]wftest.MockList{"charge": {ok}},
			Expect: &wftest.Expect{Status: "succeeded", Output: map[string]any{"receipt": map[string]any{"paid": true}}}},
		{Name: "paid on the third attempt", Mocks: map[string]wftest.MockList{"charge": {flaky, flaky, ok}},
			Expect: &wftest.Expect{Status: "succeeded", Attempts: map[string]int{"charge": 3}}},
		{Name: "declined", Mocks: map[string]wftest.MockList{"charge": {declined}},
			Expect: &wftest.Expect{Status: "failed", Error: "http_402", Nodes: map[string]string{"receipt": "skipped"}}},
		{Name: "always unavailable", Mocks: map[string]wftest.MockList{"charge": {flaky}},
			Expect: &wftest.Expect{Status: "failed", Attempts: map[string]int{"charge": 3}, Assert: []string{`steps.charge.error.code == "http_503"`}}},
	} {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			wftest.Run(t, def, c)
		})
	}
}

// Every cookbook recipe's test file passes.
func TestCookbookFiles(t *testing.T) {
	t.Parallel()
	wftest.RunFile(t, "../docs/cookbook/approval-chain.test.yaml")
}
