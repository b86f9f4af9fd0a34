package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// `ductor serve` checks trigger input against the definition's
// input_schema: a run with bad input is refused with a 422.
func TestServeChecksRunInput(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	env := Env{
		Getenv: func(k string) string { return map[string]string{"DATABASE_URL": b.vars["DATABASE_URL"]}[k] },
		Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		Ready: func(addr string) { ready <- addr },
	}
	go func() { done <- Run(ctx, []string{"serve", "--roles", "api", "--addr", "127.0.0.1:0"}, env) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case addr := <-ready:
		b.vars["DUCTOR_URL"] = "http://" + addr
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	doc := "key: checked\ninput_schema: {type: object, required: [amount]}\n" +
		"steps:\n  - {ref: a, type: transform, with: {expr: input.amount}}\n"
	if _, errOut, err := b.run(t, "apply", "-f", b.file(t, "checked.yaml", doc)); err != nil {
		t.Fatalf("apply = %v %s", err, errOut)
	}
	_, _, err := b.run(t, "run", "start", "checked", "--input", `{"other": 1}`)
	if err == nil || !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "amount") {
		t.Fatalf("run with bad input = %v, want a 422 naming amount", err)
	}
	if out, _, err := b.run(t, "run", "start", "checked", "--input", `{"amount": 1}`); err != nil || strings.TrimSpace(out) == "" {
		t.Fatalf("run with good input = %q, %v", out, err)
	}
}

// `ductor run start --wait` prints the ended run and exits 1 (an error)
// when it did not succeed; numbers go through as they were given.
func TestRunStartWaitReportsTheOutcome(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	env := Env{
		Getenv: func(k string) string { return map[string]string{"DATABASE_URL": b.vars["DATABASE_URL"]}[k] },
		Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		Ready: func(addr string) { ready <- addr },
	}
	go func() {
		done <- Run(ctx, []string{"serve", "--roles", "api,coordinator,steps", "--addr", "127.0.0.1:0"}, env)
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case addr := <-ready:
		b.vars["DUCTOR_URL"] = "http://" + addr
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	docs := map[string]string{
		"ok.yaml":  "key: ok\nsteps:\n  - {ref: a, type: transform, with: {expr: '{\"id\": input.id, \"s\": string(input.id), \"half\": input.n / 2.0}'}}\n",
		"bad.yaml": "key: bad\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.fail}}\n",
	}
	for name, doc := range docs {
		if _, errOut, err := b.run(t, "apply", "-f", b.file(t, name, doc)); err != nil {
			t.Fatalf("apply %s = %v %s", name, err, errOut)
		}
	}
	out, _, err := b.run(t, "run", "start", "ok", "--wait", "--input", `{"id": 9007199254740993, "n": 3}`)
	if err != nil {
		t.Fatalf("run start --wait of a run that succeeds = %v\n%s", err, out)
	}
	for _, want := range []string{`"id": 9007199254740993`, `"s": "9007199254740993"`, `"half": 1.5`, `"status": "succeeded"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	out, _, err = b.run(t, "run", "start", "bad", "--wait")
	if !errors.Is(err, ErrRunNotSucceeded) || !strings.Contains(out, `"status": "failed"`) {
		t.Fatalf("run start --wait of a failing run = %v\n%s; want ErrRunNotSucceeded and the run printed", err, out)
	}
}
