package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

const upgradeV1 = `
key: invoice
steps:
  - {ref: check, type: transform, with: {expr: '1'}}
  - {ref: sign_off, type: approval, with: {approvers: ['key:ops'], title: Pay}}
  - {ref: gate, type: signal, with: {name: go}}
  - {ref: pay, type: transform, with: {expr: 'input.missing'}}
edges:
  - {from: check, to: sign_off}
  - {from: check, to: gate}
  - {from: sign_off, to: pay, on: approved}
  - {from: gate, to: pay}
`

// v2 adds a step after the approval and fixes pay's expression.
const upgradeV2 = `
key: invoice
steps:
  - {ref: check, type: transform, with: {expr: '1'}}
  - {ref: sign_off, type: approval, with: {approvers: ['key:ops'], title: Pay}}
  - {ref: gate, type: signal, with: {name: go}}
  - {ref: notify, type: transform, with: {expr: '"notified"'}}
  - {ref: pay, type: transform, with: {expr: '"paid after " + steps.notify.output'}}
edges:
  - {from: check, to: sign_off}
  - {from: check, to: gate}
  - {from: sign_off, to: notify, on: approved}
  - {from: notify, to: pay}
  - {from: gate, to: pay}
`

// v3 drops the approval: only the signal gates pay.
const upgradeV3 = `
key: invoice
steps:
  - {ref: check, type: transform, with: {expr: '1'}}
  - {ref: gate, type: signal, with: {name: go}}
  - {ref: pay, type: transform, with: {expr: '"paid without approval"'}}
edges:
  - {from: check, to: gate}
  - {from: gate, to: pay}
`

func (b *apiBundle) must(t *testing.T, method, path, body string, want int) map[string]any {
	t.Helper()
	code, out := b.call(t, method, path, b.keyA, body)
	if code != want {
		t.Fatalf("%s %s %s = %d %v, want %d", method, path, body, code, out, want)
	}
	return out
}

func planNodes(t *testing.T, res map[string]any) map[string]string {
	t.Helper()
	plan, _ := res["plan"].(map[string]any)
	out := map[string]string{}
	nodes, _ := plan["nodes"].([]any)
	for _, n := range nodes {
		m := n.(map[string]any)
		out[m["ref"].(string)] = m["outcome"].(string)
	}
	return out
}

func runNodes(t *testing.T, run map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	nodes, _ := run["nodes"].([]any)
	for _, n := range nodes {
		m := n.(map[string]any)
		out[m["node"].(string)] = m
	}
	return out
}

func (b *apiBundle) approveAll(t *testing.T, key string, want int) {
	t.Helper()
	_, list := b.call(t, "GET", "/api/v1/approvals?status=pending&limit=500", b.keyA, "")
	approvals, _ := list["approvals"].([]any)
	if len(approvals) != want {
		t.Fatalf("%d pending approvals, want %d: %v", len(approvals), want, list)
	}
	for _, a := range approvals {
		path := "/api/v1/approvals/" + a.(map[string]any)["id"].(string) + "/decision"
		if code, body := b.call(t, "POST", path, key, `{"decision": "approve"}`); code != http.StatusOK {
			t.Fatalf("approve: %d %v", code, body)
		}
	}
}

func (b *apiBundle) historyDetails(t *testing.T, id string) string {
	t.Helper()
	_, h := b.call(t, "GET", "/api/v1/runs/"+id+"/history?limit=500", b.keyA, "")
	var out []string
	entries, _ := h["transitions"].([]any)
	for _, e := range entries {
		m := e.(map[string]any)
		out = append(out, fmt.Sprint(m["node"], " ", m["from"], ">", m["to"], " ", m["detail"]))
	}
	return strings.Join(out, "\n")
}

// A run waiting on an approval on v1 moves to v2, whose plan the dry run
// shows; after the approval it runs v2's path. A run whose waiting node
// v3 removes is refused with the path unless cancel_removed.
func TestUpgradeWaitingRun(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	_, ops := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Name: testdb.Ptr("ops"), Scopes: []auth.Scope{auth.ScopeApprovalsWrite}})
	b.publishYAML(t, upgradeV1)
	id := b.startRun(t, "invoice")
	b.waitWaiting(t, id, "sign_off")
	b.waitWaiting(t, id, "gate")
	b.publishYAML(t, upgradeV2)
	b.publishYAML(t, upgradeV3)
	path := "/api/v1/runs/" + id + "/upgrade"

	dry := b.must(t, "POST", path+"?dry_run=true", `{"version": 2}`, http.StatusOK)
	want := map[string]string{"check": "kept", "sign_off": "kept", "gate": "kept", "notify": "added", "pay": "changed"}
	if got := planNodes(t, dry); fmt.Sprint(got) != fmt.Sprint(want) || dry["applied"] != false {
		t.Fatalf("dry run %v, want nodes %v", dry, want)
	}
	if _, run := b.call(t, "GET", "/api/v1/runs/"+id, b.keyA, ""); runNodes(t, run)["notify"] != nil {
		t.Fatalf("a dry run changed the run: %v", run)
	}
	done := b.must(t, "POST", path, `{"version": 2}`, http.StatusOK)
	if fmt.Sprint(planNodes(t, done)) != fmt.Sprint(planNodes(t, dry)) || done["applied"] != true {
		t.Fatalf("upgrade %v differs from its dry run %v", done, dry)
	}
	again := b.must(t, "POST", path, `{"version": 2}`, http.StatusOK)
	if again["noop"] != true || again["applied"] != false {
		t.Fatalf("upgrading to the version the run is on: %v, want a no-op", again)
	}

	// v3 removes the waiting approval: refused, with the path.
	code, refused := b.call(t, "POST", path, b.keyA, `{"version": 3}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(refused), "steps.sign_off") {
		t.Fatalf("removing a waiting node: %d %v, want 422 naming steps.sign_off", code, refused)
	}

	b.approveAll(t, ops, 1)
	b.must(t, "POST", "/api/v1/runs/"+id+"/signals", `{"name": "go", "request_id": "r1"}`, http.StatusAccepted)
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || fmt.Sprint(run["output"]) != "map[pay:paid after notified]" {
		t.Fatalf("run %v, want v2's path", run)
	}
	if h := b.historyDetails(t, id); !strings.Contains(h, "upgraded from v1 to v2 by") {
		t.Errorf("history has no upgrade entry:\n%s", h)
	}
}

// A run whose waiting node the target removes moves with cancel_removed:
// the approval is withdrawn and the run goes on without it.
func TestUpgradeCancelRemoved(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, upgradeV1)
	id := b.startRun(t, "invoice")
	b.waitWaiting(t, id, "sign_off")
	b.waitWaiting(t, id, "gate")
	b.publishYAML(t, upgradeV2)
	b.publishYAML(t, upgradeV3)
	path := "/api/v1/runs/" + id + "/upgrade"
	dry := b.must(t, "POST", path+"?dry_run=true", `{"version": 3, "cancel_removed": true}`, http.StatusOK)
	done := b.must(t, "POST", path, `{"version": 3, "cancel_removed": true}`, http.StatusOK)
	if got := planNodes(t, done); fmt.Sprint(got) != fmt.Sprint(planNodes(t, dry)) || got["sign_off"] != "cancelled" {
		t.Fatalf("upgrade %v, dry run %v", done, dry)
	}
	_, list := b.call(t, "GET", "/api/v1/approvals?status=pending", b.keyA, "")
	if a, _ := list["approvals"].([]any); len(a) != 0 {
		t.Errorf("the removed approval is still pending: %v", list)
	}
	b.must(t, "POST", "/api/v1/runs/"+id+"/signals", `{"name": "go", "request_id": "r1"}`, http.StatusAccepted)
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || fmt.Sprint(run["output"]) != "map[pay:paid without approval]" {
		t.Fatalf("run %v, want v3's path", run)
	}
	if runNodes(t, run)["sign_off"] != nil {
		t.Errorf("the removed node is still there: %v", run["nodes"])
	}
}

// A run that failed on v1's wrong expression is retried on v2 from its
// failed node: v1's finished outputs are kept, v2's expression runs, and
// the dry run says what runs again.
func TestRetryOnNewVersion(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: calc
steps:
  - {ref: fetch, type: task, with: {handler: builtin.echo, input_expr: '{"n": 41}'}}
  - {ref: calc, type: transform, with: {expr: 'steps.fetch.output.wrong + 1'}}
edges:
  - {from: fetch, to: calc}
`)
	id := b.startRun(t, "calc")
	if run := b.waitStatus(t, id); run["status"] != "failed" {
		t.Fatalf("v1 run %v, want failed", run)
	}
	b.publishYAML(t, `
key: calc
steps:
  - {ref: fetch, type: task, with: {handler: builtin.echo, input_expr: '{"n": 41}'}}
  - {ref: calc, type: transform, with: {expr: 'steps.fetch.output.n + 1'}}
edges:
  - {from: fetch, to: calc}
`)
	path := "/api/v1/runs/" + id + "/retry"
	dry := b.must(t, "POST", path+"?dry_run=true", `{"node": "calc", "version": 2}`, http.StatusOK)
	reruns := fmt.Sprint(dry["plan"].(map[string]any)["reruns"])
	if !strings.Contains(reruns, "calc") || strings.Contains(reruns, "fetch") {
		t.Fatalf("dry run reruns %s, want calc only", reruns)
	}
	b.must(t, "POST", path, `{"node": "calc", "version": 2}`, http.StatusAccepted)
	run := testwait.Value(t, 20*time.Second, "the retried run ends", func() (map[string]any, bool) {
		_, run := b.call(t, "GET", "/api/v1/runs/"+id, b.keyA, "")
		return run, run["status"] == "succeeded" // a failure on v1's expression would time out
	})
	if run["status"] != "succeeded" || fmt.Sprint(run["output"]) != "map[calc:42]" {
		t.Fatalf("retried run %v, want calc 42", run)
	}
	if f := runNodes(t, run)["fetch"]; f["generation"] != nil && f["generation"] != float64(0) {
		t.Errorf("fetch ran again: %v", f)
	}
}

// Fifty runs waiting on an approval on v1 are upgraded in bulk to v2: the
// dry run counts them, the batch moves them all, and once approved each
// runs v2's path.
func TestUpgradeInBulk(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	_, ops := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Name: testdb.Ptr("ops"), Scopes: []auth.Scope{auth.ScopeApprovalsWrite}})
	b.publishYAML(t, `
key: bulk
steps:
  - {ref: check, type: transform, with: {expr: '1'}}
  - {ref: sign_off, type: approval, with: {approvers: ['key:ops'], title: Pay}}
  - {ref: pay, type: transform, with: {expr: 'input.missing'}}
edges:
  - {from: check, to: sign_off}
  - {from: sign_off, to: pay, on: approved}
`)
	const n = 50
	ids := make([]string, n)
	for i := range ids {
		ids[i] = b.startRun(t, "bulk")
	}
	for _, id := range ids {
		b.waitWaiting(t, id, "sign_off")
	}
	b.publishYAML(t, `
key: bulk
steps:
  - {ref: check, type: transform, with: {expr: '1'}}
  - {ref: sign_off, type: approval, with: {approvers: ['key:ops'], title: Pay}}
  - {ref: notify, type: transform, with: {expr: '"notified"'}}
  - {ref: pay, type: transform, with: {expr: '"paid after " + steps.notify.output'}}
edges:
  - {from: check, to: sign_off}
  - {from: sign_off, to: notify, on: approved}
  - {from: notify, to: pay}
`)
	one := b.must(t, "POST", "/api/v1/runs/"+ids[0]+"/upgrade?dry_run=true", `{"version": 2}`, http.StatusOK)
	batch := `{"action": "upgrade", "version": 2, "filter": {"definition": "bulk"}}`
	dry := b.must(t, "POST", "/api/v1/runs/batch?dry_run=true", batch, http.StatusOK)
	if c := fmt.Sprint(dry["counts"]); c != "map[outcomes:map[would_upgrade:50] refusals:map[] total:50]" {
		t.Fatalf("dry run counts %s, want 50 would_upgrade", c)
	}
	created := b.must(t, "POST", "/api/v1/runs/batch", batch, http.StatusAccepted)
	done := testwait.Value(t, 30*time.Second, "the batch finishes", func() (map[string]any, bool) {
		_, got := b.call(t, "GET", "/api/v1/batches/"+created["id"].(string), b.keyA, "")
		return got, got["status"] == "completed"
	})
	if done["done"] != float64(n) || done["failed"] != float64(0) {
		t.Fatalf("batch %v, want %d done", done, n)
	}
	// The batch did what the dry run of one run said, node by node.
	for _, id := range ids {
		_, run := b.call(t, "GET", "/api/v1/runs/"+id, b.keyA, "")
		nodes := runNodes(t, run)
		if run["version"] != float64(2) || nodes["notify"]["state"] != "pending" || nodes["sign_off"]["state"] != "waiting" {
			t.Fatalf("run %s after the batch: %v", id, run)
		}
		if len(nodes) != len(planNodes(t, one)) {
			t.Fatalf("run %s has nodes %v, the plan %v", id, nodes, planNodes(t, one))
		}
	}
	b.approveAll(t, ops, n)
	for _, id := range ids {
		if run := b.waitStatus(t, id); run["status"] != "succeeded" || fmt.Sprint(run["output"]) != "map[pay:paid after notified]" {
			t.Fatalf("run %s: %v, want v2's path", id, run)
		}
	}
}
