package auth

import "testing"

func TestRolePermissions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		role Role
		perm Permission
		want bool
	}{
		{RoleViewer, PermView, true},
		{RoleViewer, PermKeysManage, false},
		{RoleEditor, PermDefinitionsWrite, true},
		{RoleEditor, PermRunsOperate, false},
		{RoleOperator, PermRunsOperate, true},
		{RoleApprover, PermApprove, true},
		{RoleApprover, PermDefinitionsWrite, false},
		{RoleAdmin, PermMembersManage, true},
		{RoleAdmin, PermOwnersManage, false},
		{RoleAdmin, PermTierManage, false},
		{RoleOwner, PermTierManage, true},
		{RoleOwner, Permission("nonsense"), false},
	}
	for _, tc := range cases {
		if got := tc.role.Can(tc.perm); got != tc.want {
			t.Errorf("%s can %s = %v, want %v", tc.role, tc.perm, got, tc.want)
		}
	}
	if _, err := ParseRole("root"); err == nil {
		t.Error("ParseRole accepted root")
	}
}
