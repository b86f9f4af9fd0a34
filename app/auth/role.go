package auth

import (
	"fmt"
	"slices"
)

// Role is what a person may do in a tenant. A person has one role per
// tenant they belong to.
type Role string

const (
	RoleOwner    Role = "owner"    // everything, including the tier and other owners
	RoleAdmin    Role = "admin"    // everything but the tier and owners
	RoleEditor   Role = "editor"   // definitions
	RoleOperator Role = "operator" // runs, signals, cancel
	RoleApprover Role = "approver" // approvals and cases
	RoleViewer   Role = "viewer"   // reads
)

// Roles lists the roles from most to least powerful.
var Roles = []Role{RoleOwner, RoleAdmin, RoleEditor, RoleOperator, RoleApprover, RoleViewer}

// ParseRole validates a role name.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !slices.Contains(Roles, r) {
		return "", fmt.Errorf("unknown role %q (known: owner, admin, editor, operator, approver, viewer)", s)
	}
	return r, nil
}

// Permission is one thing a dashboard page or action needs.
type Permission string

const (
	PermView             Permission = "view"              // every page a member can see
	PermDefinitionsWrite Permission = "definitions:write" // save, publish, unpublish
	PermRunsOperate      Permission = "runs:operate"      // start, cancel, signal, retry
	PermApprove          Permission = "approve"           // decide approvals, work cases
	PermKeysManage       Permission = "keys:manage"       // create and revoke API keys
	PermMembersManage    Permission = "members:manage"    // add, change and remove members
	PermOwnersManage     Permission = "owners:manage"     // grant or take the owner role
	PermTierManage       Permission = "tier:manage"       // change the tenant's tier
	PermAuditRead        Permission = "audit:read"        // read the audit log
	PermSchedulesWrite   Permission = "schedules:write"   // create, pause and trigger schedules
	PermWebhooksManage   Permission = "webhooks:manage"   // create, rotate and delete webhooks
)

// grants lists, for each permission, the roles that hold it.
var grants = map[Permission][]Role{
	PermView:             Roles,
	PermDefinitionsWrite: {RoleOwner, RoleAdmin, RoleEditor},
	PermRunsOperate:      {RoleOwner, RoleAdmin, RoleOperator},
	PermApprove:          {RoleOwner, RoleAdmin, RoleApprover},
	PermKeysManage:       {RoleOwner, RoleAdmin},
	PermMembersManage:    {RoleOwner, RoleAdmin},
	PermOwnersManage:     {RoleOwner},
	PermTierManage:       {RoleOwner},
	PermAuditRead:        {RoleOwner, RoleAdmin},
	PermSchedulesWrite:   {RoleOwner, RoleAdmin, RoleEditor, RoleOperator},
	PermWebhooksManage:   {RoleOwner, RoleAdmin},
}

// Can reports whether the role holds the permission. An unknown permission
// is held by no one.
func (r Role) Can(p Permission) bool {
	return slices.Contains(grants[p], r)
}
