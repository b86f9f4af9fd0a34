package api_test

import (
	"testing"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/testdb"
)

// API keys do not stand in for people: a key decides only an approval
// that names it, whatever its scopes, and keys of one name are one
// identity, so two keys cannot meet a two-person approval.
func TestKeysCannotStandInForPeople(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: four-eyes
steps:
  - { ref: bob, type: approval, with: { approvers: [ "bob@example.com" ], title: Bob only } }
  - { ref: two, type: approval, with: { approvers: [ "role:approver", "key:deployer" ], title: Two people, min_approvals: 2 } }
`)
	id := b.startRun(t, "four-eyes")
	b.waitWaiting(t, id, "bob")
	b.waitWaiting(t, id, "two")
	ids := map[string]string{}
	_, list := b.call(t, "GET", "/api/v1/approvals?status=pending", b.keyA, "")
	for _, a := range list["approvals"].([]any) {
		a := a.(map[string]any)
		ids[a["node"].(string)] = a["id"].(string)
	}
	named := func(name string, scopes ...auth.Scope) string {
		_, k := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Name: testdb.Ptr(name), Scopes: scopes})
		return k
	}
	writer := named("writer", auth.ScopeApprovalsWrite)
	admin := named("root", auth.ScopeAdmin)
	deployer := named("deployer", auth.ScopeApprovalsWrite)
	deployerToo := named("deployer", auth.ScopeApprovalsWrite)
	decide := func(node, key string) int {
		code, _ := b.call(t, "POST", "/api/v1/approvals/"+ids[node]+"/decision", key, `{"decision": "approve"}`)
		return code
	}
	for _, tc := range []struct {
		what, node, key string
		want            int
	}{
		{"an approvals:write key on bob's approval", "bob", writer, 403},
		{"an admin key on bob's approval", "bob", admin, 403},
		{"a key named in the approval", "two", deployer, 200},
		{"another key of the same name", "two", deployerToo, 409},
		{"a key not named", "two", writer, 403},
		{"an admin key not named", "two", admin, 403},
	} {
		if got := decide(tc.node, tc.key); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.what, got, tc.want)
		}
	}
	code, a := b.call(t, "GET", "/api/v1/approvals?status=pending", b.keyA, "")
	if got := a["approvals"].([]any); code != 200 || len(got) != 2 {
		t.Fatalf("pending approvals = %d %v, want both still pending", code, a)
	}
	for _, a := range a["approvals"].([]any) {
		a := a.(map[string]any)
		if a["node"] != "two" {
			continue
		}
		ds := a["decisions"].([]any)
		if len(ds) != 1 || ds[0].(map[string]any)["by"] != "key:deployer" {
			t.Errorf("decisions on two = %v, want one by key:deployer", ds)
		}
	}
}
