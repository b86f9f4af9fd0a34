package cli

import (
	"context"
	"fmt"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

// runMember handles `member add --tenant SLUG --email EMAIL --role ROLE`:
// it adds a person to a tenant, or changes their role, before or after
// their first login (they are matched by the verified email they log in
// with). The change is audited with the actor "cli".
func runMember(ctx context.Context, env Env, args []string) error {
	const usage = "ductor member add --tenant SLUG --email EMAIL --role ROLE"
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintln(env.Stdout, "Usage:", usage)
		return nil
	}
	if len(args) == 0 || args[0] != "add" {
		return want(usage)
	}
	fs := newFlags("member add --tenant SLUG --email EMAIL --role ROLE", env)
	tenant := fs.String("tenant", "", "tenant slug (required)")
	email := fs.String("email", "", "the person's email (required)")
	role := fs.String("role", "", "owner, admin, editor, operator, approver or viewer (required)")
	cfg, _, err := loadConfig(fs, args[1:], env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if *tenant == "" || *email == "" || *role == "" {
		return usagef("--tenant, --email and --role are required: want `%s`", usage)
	}
	r, err := auth.ParseRole(*role)
	if err != nil {
		return err
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		m, err := addMember(ctx, s, *tenant, *email, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s is %s of %s\n", m.Email, m.Role, *tenant)
		return nil
	})
}

func addMember(ctx context.Context, s *store.Store, slug, email string, role auth.Role) (store.Member, error) {
	var m store.Member
	err := s.InTx(ctx, func(tx *store.Store) error {
		t, err := tx.TenantGetBySlug(ctx, slug)
		if err != nil {
			return err
		}
		m, err = tx.MemberSet(ctx, t.ID, email, role)
		if err != nil {
			return err
		}
		return tx.AuditRecord(ctx, t.ID, store.ActorCLI, store.AuditMemberRole, m.Email, map[string]any{"to": role})
	})
	return m, err
}
