package pages

import (
	"net/http"
	"slices"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleMembers lists the tenant's members.
func handleMembers(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		return renderMembers(c, s, http.StatusOK, "")
	}
}

func renderMembers(c echo.Context, s *store.Store, status int, msg string) error {
	v := httpx.ViewerOf(c)
	members, err := s.MemberList(c.Request().Context(), v.Tenant.ID)
	if err != nil {
		return err
	}
	return httpx.Render(c, status, views.MembersPage(shellFor(c, "Members", "settings"), views.MembersData{
		Tabs: settingsTabs(c, "members"), Members: members, Grantable: grantable(v), Error: msg,
	}))
}

// grantable lists the roles the viewer may give or take: the owner role
// only by owners.
func grantable(v httpx.Viewer) []auth.Role {
	if v.Can(auth.PermOwnersManage) {
		return auth.Roles
	}
	return slices.DeleteFunc(slices.Clone(auth.Roles), func(r auth.Role) bool { return r == auth.RoleOwner })
}

// memberChange is one of the three member forms: add, role, remove.
type memberChange struct {
	action string // store.AuditMemberAdd, AuditMemberRole or AuditMemberRemove
	apply  func(c echo.Context, tx *store.Store, v httpx.Viewer, email string, from, to auth.Role) error
}

// handleMemberChange checks and applies a member form: the viewer must be
// allowed to give the new role and to take the old one; the change and its
// audit row commit together.
func handleMemberChange(s *store.Store, mc memberChange) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		err := s.InTx(c.Request().Context(), func(tx *store.Store) error {
			email, from, to, err := memberForm(c, tx, v, mc.action)
			if err != nil {
				return err
			}
			if err := mc.apply(c, tx, v, email, from, to); err != nil {
				return err
			}
			return tx.AuditRecord(c.Request().Context(), v.Tenant.ID, v.Actor(), mc.action, email,
				map[string]any{"from": from, "to": to})
		})
		if err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error { return renderMembers(c, s, status, msg) })
		}
		return seeOther(c, "/settings/members")
	}
}

// memberForm reads the form's email and role and the member's current
// role, and checks the viewer may make the change.
func memberForm(c echo.Context, tx *store.Store, v httpx.Viewer, action string) (string, auth.Role, auth.Role, error) {
	email, err := store.NormalizeEmail(c.FormValue("email"))
	if err != nil {
		return "", "", "", err
	}
	var from, to auth.Role
	cur, err := tx.MemberGet(c.Request().Context(), v.Tenant.ID, email)
	switch {
	case err == nil:
		from = cur.Role
	case !apperr.Is(err, apperr.NotFound):
		return "", "", "", err
	}
	if action != store.AuditMemberRemove {
		if to, err = auth.ParseRole(c.FormValue("role")); err != nil {
			return "", "", "", apperr.New(apperr.Invalid, "%s", err.Error())
		}
	}
	if err := checkMemberChange(v, action, from, to); err != nil {
		return "", "", "", err
	}
	return email, from, to, nil
}

func checkMemberChange(v httpx.Viewer, action string, from, to auth.Role) error {
	switch {
	case action == store.AuditMemberAdd && from != "":
		return apperr.New(apperr.Conflict, "already a member: change their role in the list")
	case action != store.AuditMemberAdd && from == "":
		return apperr.New(apperr.NotFound, "member not found")
	case (from == auth.RoleOwner || to == auth.RoleOwner) && !v.Can(auth.PermOwnersManage):
		return apperr.New(apperr.Forbidden, "only an owner can give or take the owner role")
	}
	return nil
}

var (
	memberAdd = memberChange{store.AuditMemberAdd, setMember}
	memberSet = memberChange{store.AuditMemberRole, setMember}
	memberDel = memberChange{store.AuditMemberRemove, func(c echo.Context, tx *store.Store, v httpx.Viewer, email string, _, _ auth.Role) error {
		return tx.MemberRemove(c.Request().Context(), v.Tenant.ID, email)
	}}
)

func setMember(c echo.Context, tx *store.Store, v httpx.Viewer, email string, _, to auth.Role) error {
	_, err := tx.MemberSet(c.Request().Context(), v.Tenant.ID, email, to)
	return err
}
