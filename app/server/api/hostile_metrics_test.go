package api_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A bridge worker's error code is validated, and one that passes never
// becomes a metric label unless Ductor knows it: /metrics stays small
// however many codes hostile workers send.
func TestHostileErrorCodesStayOutOfMetrics(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, `
key: flaky
steps:
  - ref: charge
    type: task
    with: {handler: flaky.op, queue: default}
    retry: {max_attempts: 30, initial_interval: 10ms, backoff_coefficient: 1.0, max_interval: 10ms}
    timeout: 30s
`)
	id := b.startTaskRun(t, "flaky", `{}`)

	task := b.pollOne(t, "default", "flaky.op")
	for _, code := range []string{strings.Repeat("x", 65), "Card Declined", "bad\ncode", "é", "a/b"} {
		body := tokenBody(task, fmt.Sprintf(`, "error": {"message": "m", "code": %q, "retryable": true}`, code))
		if status, res := b.taskCall(t, task, "fail", body); status != 422 {
			t.Fatalf("fail with code %q = %d %v, want 422", code, status, res)
		}
	}
	var before string
	for i := range 20 {
		code := fmt.Sprintf("hostile.%d-%s", i, strings.Repeat("z", 50))
		body := tokenBody(task, fmt.Sprintf(`, "error": {"message": "m", "code": %q, "retryable": true}`, code))
		if status, res := b.taskCall(t, task, "fail", body); status != 200 {
			t.Fatalf("fail %d = %d %v", i, status, res)
		}
		task = b.pollOne(t, "default", "flaky.op")
		if i == 0 {
			// Every series a failed attempt makes exists now: the
			// other 19 codes must add none.
			before = b.scrape(t)
		}
	}
	grown := b.scrape(t)
	if status, res := b.taskCall(t, task, "complete", tokenBody(task, `, "output": {}`)); status != 200 {
		t.Fatalf("complete = %d %v", status, res)
	}
	if run := b.waitStatus(t, id); run["status"] != "succeeded" {
		t.Fatalf("run = %v", run)
	}
	after := b.scrape(t)
	if strings.Contains(after, "hostile") {
		t.Errorf("a worker's error code became a label:\n%s", after)
	}
	if !strings.Contains(after, `code="other"`) {
		t.Errorf("unknown codes are not counted as other:\n%s", after)
	}
	if len(grown)-len(before) > 4<<10 {
		t.Errorf("/metrics grew from %d to %d bytes with 19 more error codes:\n%s", len(before), len(grown), diffLines(before, grown))
	}
}

func (b *apiBundle) scrape(t *testing.T) string {
	t.Helper()
	res, err := http.Get(b.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return string(raw)
}

// A request's method is a metric label only when it is a standard one:
// any other token a client sends counts as other.
func TestHostileMethodsStayOutOfMetrics(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	for i := range 5 {
		req, err := http.NewRequest(fmt.Sprintf("HOSTILE%d", i), b.srv.URL+"/api/v1/runs", nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	after := b.scrape(t)
	if strings.Contains(after, "HOSTILE") {
		t.Errorf("a request's method became a label:\n%s", after)
	}
	if !strings.Contains(after, `method="other"`) {
		t.Errorf("unknown methods are not counted as other:\n%s", after)
	}
}

// diffLines lists the lines of b that a does not have.
func diffLines(a, b string) string {
	had := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		had[l] = true
	}
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if !had[l] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// One tenant's many definitions take at most its share of the definition
// label's values: another tenant's definition still gets its own.
func TestDefinitionLabelsAreSharedFairly(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	publishAndStart := func(key, def string) {
		t.Helper()
		doc := fmt.Sprintf(`{"key": %q, "steps": [{"ref": "a", "type": "transform", "with": {"expr": "1"}}]}`, def)
		if code, res := b.send(t, "POST", "/api/v1/definitions/"+def+"/versions", key, "application/json", doc); code != http.StatusCreated {
			t.Fatalf("publish %s = %d %v", def, code, res)
		}
		if code, res := b.call(t, "POST", "/api/v1/runs", key, fmt.Sprintf(`{"definition": %q}`, def)); code != http.StatusCreated {
			t.Fatalf("start %s = %d %v", def, code, res)
		}
	}
	for i := range 15 {
		publishAndStart(b.keyA, fmt.Sprintf("greedy-%02d", i))
	}
	publishAndStart(b.keyB, "modest")
	m := b.scrape(t)
	if !strings.Contains(m, `ductor_runs_started_total{definition="modest"} 1`) {
		t.Errorf("the second tenant's definition has no label of its own:\n%s", grepLines(m, "ductor_runs_started_total"))
	}
	if n := strings.Count(m, `ductor_runs_started_total{definition="greedy-`); n != 10 {
		t.Errorf("the first tenant has %d definition labels, want its share of 10:\n%s", n, grepLines(m, "ductor_runs_started_total"))
	}
	if !strings.Contains(m, `ductor_runs_started_total{definition="other"} 5`) {
		t.Errorf("the first tenant's other definitions are not counted as other:\n%s", grepLines(m, "ductor_runs_started_total"))
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
