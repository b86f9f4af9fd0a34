package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// member add works before a person's first login (membership is by email)
// and again to change their role; each change is audited as the CLI.
func TestMemberAdd(t *testing.T) {
	t.Parallel()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	ctx := context.Background()
	tenant := testdb.Tenant(t, s, nil)
	out, err := runCLI(t, url, "member", "add", "--tenant", tenant.Slug, "--email", "Dana@Example.com", "--role", "owner")
	if err != nil || !strings.Contains(out, "dana@example.com is owner of "+tenant.Slug) {
		t.Fatalf("member add = %q, %v", out, err)
	}
	if _, err := runCLI(t, url, "member", "add", "--tenant", tenant.Slug, "--email", "erin@example.com", "--role", "editor"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, url, "member", "add", "--tenant", tenant.Slug, "--email", "erin@example.com", "--role", "approver"); err != nil {
		t.Fatal(err)
	}
	// Dana logs in for the first time afterwards and finds the tenant.
	if _, err := s.UserLogin(ctx, store.Identity{Issuer: "i", Subject: "d", Email: "dana@example.com"}); err != nil {
		t.Fatal(err)
	}
	ms, err := s.MembershipsOf(ctx, "dana@example.com")
	if err != nil || len(ms) != 1 || ms[0].Tenant.ID != tenant.ID || ms[0].Role != auth.RoleOwner {
		t.Fatalf("dana's memberships = %+v, %v", ms, err)
	}
	erin, err := s.MemberGet(ctx, tenant.ID, "erin@example.com")
	if err != nil || erin.Role != auth.RoleApprover {
		t.Fatalf("erin = %+v, %v", erin, err)
	}
	audit, _ := s.AuditList(ctx, tenant.ID, 10)
	if len(audit) != 3 || audit[0].Actor != store.ActorCLI || audit[0].Target != "erin@example.com" {
		t.Fatalf("audit = %+v", audit)
	}
}

func TestMemberAddExplainsBadInput(t *testing.T) {
	t.Parallel()
	pool, url := testdb.SchemaURL(t)
	tenant := testdb.Tenant(t, store.New(pool), nil)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"member"}, "needs a subcommand"},
		{[]string{"member", "add", "--tenant", tenant.Slug, "--email", "x@y.z"}, "--role are required"},
		{[]string{"member", "add", "--tenant", tenant.Slug, "--email", "x@y.z", "--role", "god"}, "unknown role"},
		{[]string{"member", "add", "--tenant", tenant.Slug, "--email", "nope", "--role", "viewer"}, "not an email"},
		{[]string{"member", "add", "--tenant", "missing", "--email", "x@y.z", "--role", "viewer"}, "not found"},
	}
	for _, tc := range cases {
		_, err := runCLI(t, url, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
	// The last owner stays an owner.
	if _, err := runCLI(t, url, "member", "add", "--tenant", tenant.Slug, "--email", "o@y.z", "--role", "owner"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, url, "member", "add", "--tenant", tenant.Slug, "--email", "o@y.z", "--role", "viewer"); err == nil || !strings.Contains(err.Error(), "at least one owner") {
		t.Errorf("demoting the last owner: %v", err)
	}
}

// member list shows a tenant's people; member remove takes one out,
// audited as the CLI, and keeps the last owner.
func TestMemberListAndRemove(t *testing.T) {
	t.Parallel()
	pool, url := testdb.SchemaURL(t)
	s := store.New(pool)
	ctx := context.Background()
	tenant := testdb.Tenant(t, s, nil)
	for _, m := range [][2]string{{"dana@example.com", "owner"}, {"erin@example.com", "editor"}} {
		if _, err := runCLI(t, url, "member", "add", "--tenant", tenant.Slug, "--email", m[0], "--role", m[1]); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runCLI(t, url, "member", "list", "--tenant", tenant.Slug, "--output", "json")
	if err != nil || !strings.Contains(out, `"email": "erin@example.com"`) || !strings.Contains(out, `"role": "owner"`) {
		t.Fatalf("member list = %q, %v", out, err)
	}
	out, err = runCLI(t, url, "member", "remove", "--tenant", tenant.Slug, "--email", "Erin@Example.com")
	if err != nil || out != "erin@example.com is no longer a member of "+tenant.Slug+"\n" {
		t.Fatalf("member remove = %q, %v", out, err)
	}
	if _, err := s.MemberGet(ctx, tenant.ID, "erin@example.com"); err == nil {
		t.Fatal("erin is still a member")
	}
	audit, _ := s.AuditList(ctx, tenant.ID, 10)
	if len(audit) != 3 || audit[0].Action != store.AuditMemberRemove || audit[0].Actor != store.ActorCLI || audit[0].Target != "erin@example.com" {
		t.Fatalf("audit = %+v", audit)
	}
	if _, err := runCLI(t, url, "member", "remove", "--tenant", tenant.Slug, "--email", "dana@example.com"); err == nil || !strings.Contains(err.Error(), "at least one owner") {
		t.Errorf("removing the last owner: %v", err)
	}
	if _, err := runCLI(t, url, "member", "remove", "--tenant", tenant.Slug, "--email", "nobody@example.com"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("removing a stranger: %v", err)
	}
	if table, err := runCLI(t, url, "member", "list", "--tenant", tenant.Slug, "--output", "table"); err != nil || !strings.HasPrefix(table, "EMAIL") {
		t.Errorf("member list table = %q, %v", table, err)
	}
}
