package cli

import (
	"context"
	"fmt"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

func memberSubcommands() []subcommand {
	return []subcommand{
		{"add", "member add --tenant SLUG --email EMAIL --role ROLE", "add a person to a tenant, or change their role", runMemberAdd},
		{"list", "member list --tenant SLUG [--output json|table]", "a tenant's members: email, role, name and last login", runMemberList},
		{"remove", "member remove --tenant SLUG --email EMAIL", "take a person out of a tenant (the last owner stays)", runMemberRemove},
	}
}

// runMember handles `ductor member …`: a tenant's people, straight in the
// database, before or after their first login (they are matched by the
// verified email they log in with). Each change is audited with the actor
// "cli".
func runMember(ctx context.Context, env Env, args []string) error {
	return dispatch(ctx, env, "member", memberSubcommands(), args)
}

func runMemberAdd(ctx context.Context, env Env, args []string) error {
	const usage = "ductor member add --tenant SLUG --email EMAIL --role ROLE"
	fs := newFlags("member add --tenant SLUG --email EMAIL --role ROLE", env)
	tenant := fs.String("tenant", "", "tenant slug (required)")
	email := fs.String("email", "", "the person's email (required)")
	role := fs.String("role", "", "owner, admin, editor, operator, approver or viewer (required)")
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
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

// memberView is a member as `member list --output json` prints it.
type memberView struct {
	Email       string  `json:"email"`
	Role        string  `json:"role"`
	Name        string  `json:"name"`
	CreatedAt   string  `json:"created_at"`
	LastLoginAt *string `json:"last_login_at"`
}

func runMemberList(ctx context.Context, env Env, args []string) error {
	fs := newFlags("member list --tenant SLUG [--output json|table]", env)
	tenant := fs.String("tenant", "", "tenant slug (required)")
	out := outputFlag(fs, env)
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("--tenant is required: want `ductor member list --tenant SLUG`")
	}
	return withTenant(ctx, cfg, *tenant, func(s *store.Store, t store.Tenant) error {
		ms, err := s.MemberList(ctx, t.ID)
		if err != nil {
			return err
		}
		views := make([]memberView, len(ms))
		for i, m := range ms {
			views[i] = memberView{Email: m.Email, Role: string(m.Role), Name: m.Name, CreatedAt: stamp(&m.CreatedAt)}
			if m.LastLoginAt != nil {
				s := stamp(m.LastLoginAt)
				views[i].LastLoginAt = &s
			}
		}
		return render(env, *out, map[string]any{"members": views}, func(any) *table {
			t := &table{header: []string{"EMAIL", "ROLE", "NAME", "ADDED", "LAST_LOGIN"}}
			for _, v := range views {
				t.add(v.Email, v.Role, v.Name, v.CreatedAt, deref(v.LastLoginAt))
			}
			return t
		})
	})
}

func runMemberRemove(ctx context.Context, env Env, args []string) error {
	fs := newFlags("member remove --tenant SLUG --email EMAIL", env)
	tenant := fs.String("tenant", "", "tenant slug (required)")
	email := fs.String("email", "", "the person's email (required)")
	cfg, _, err := loadConfig(fs, args, env, "127.0.0.1:8080")
	if err != nil {
		return err
	}
	if *tenant == "" || *email == "" {
		return usagef("--tenant and --email are required: want `ductor member remove --tenant SLUG --email EMAIL`")
	}
	return withStore(ctx, cfg, func(s *store.Store) error {
		m, err := removeMember(ctx, s, *tenant, *email)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s is no longer a member of %s\n", m.Email, *tenant)
		return nil
	})
}

// removeMember takes the person out and audits it, with the role they had.
func removeMember(ctx context.Context, s *store.Store, slug, email string) (store.Member, error) {
	var m store.Member
	err := s.InTx(ctx, func(tx *store.Store) error {
		t, err := tx.TenantGetBySlug(ctx, slug)
		if err != nil {
			return err
		}
		e, err := store.NormalizeEmail(email)
		if err != nil {
			return err
		}
		if m, err = tx.MemberGet(ctx, t.ID, e); err != nil {
			return err
		}
		if err := tx.MemberRemove(ctx, t.ID, e); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, t.ID, store.ActorCLI, store.AuditMemberRemove, m.Email, map[string]any{"from": m.Role})
	})
	return m, err
}
