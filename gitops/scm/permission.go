package scm

import (
	"fmt"
	"strings"
)

// Permission is a user's role on a repository, from least to most: none, read, triage, write,
// maintain, admin.
type Permission string

// The permissions, least first.
const (
	// PermissionNone is no access.
	PermissionNone Permission = "none"
	// PermissionRead may read and clone.
	PermissionRead Permission = "read"
	// PermissionTriage may also manage issues and pull requests, labels included.
	PermissionTriage Permission = "triage"
	// PermissionWrite may also push.
	PermissionWrite Permission = "write"
	// PermissionMaintain may also manage the repository without sensitive settings.
	PermissionMaintain Permission = "maintain"
	// PermissionAdmin has full access.
	PermissionAdmin Permission = "admin"
)

// rank orders the permissions; unknown ones rank below none.
func (p Permission) rank() int {
	switch p {
	case PermissionNone:
		return 0
	case PermissionRead:
		return 1
	case PermissionTriage:
		return 2
	case PermissionWrite:
		return 3
	case PermissionMaintain:
		return 4
	case PermissionAdmin:
		return 5
	}
	return -1
}

// AtLeast tells whether p grants everything min grants. An unknown permission grants nothing.
func (p Permission) AtLeast(minimum Permission) bool {
	return p.rank() >= 0 && minimum.rank() >= 0 && p.rank() >= minimum.rank()
}

// ParsePermission reads a permission name, case-insensitively. GitHub's legacy "pull" and
// "push" mean read and write.
func ParsePermission(s string) (Permission, error) {
	switch p := Permission(strings.ToLower(strings.TrimSpace(s))); p {
	case PermissionNone, PermissionRead, PermissionTriage, PermissionWrite, PermissionMaintain, PermissionAdmin:
		return p, nil
	case "pull":
		return PermissionRead, nil
	case "push":
		return PermissionWrite, nil
	}
	return "", fmt.Errorf("unknown permission %q", s)
}
