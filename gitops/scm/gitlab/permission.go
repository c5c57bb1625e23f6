package gitlab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Permission implements scm.PermissionReader: the user's effective access level on the project
// (GET /projects/:id/members/all/:user_id after resolving the username with GET
// /users?username=): direct, inherited from the project's groups, or through a group the
// project or its groups are shared with; the highest counts. A user GitLab does not know is a
// scm.NotFoundError; a known user without membership, and a blocked or deactivated one, is
// PermissionNone. The project is read first (once), so that a project the token cannot see is a
// NotFoundError rather than everyone's "none".
func (c *Client) Permission(ctx context.Context, user string) (scm.Permission, error) {
	if _, err := c.projectInfo(ctx); err != nil {
		return "", err
	}
	id, err := c.userID(ctx, user)
	if err != nil {
		return "", err
	}
	m, resp, err := c.api.ProjectMembers.GetInheritedProjectMember(c.project, id, gl.WithContext(ctx))
	if err != nil {
		err = mapError(err, resp, "membership of user "+user+" in project "+c.project)
		if scm.IsNotFound(err) {
			return scm.PermissionNone, nil
		}
		return "", err
	}
	if !strings.EqualFold(m.State, "active") {
		return scm.PermissionNone, nil
	}
	return permissionOf(m.AccessLevel), nil
}

// permissionOf maps a GitLab access level onto sluice's permissions:
//
//	no access (0), minimal access (5)  none
//	guest (10), planner (15)           read
//	reporter (20)                      triage (may label merge requests)
//	developer (30)                     write (may push)
//	maintainer (40)                    maintain
//	owner (50), admin (60)             admin
//
// A level between these takes the one below it.
func permissionOf(level gl.AccessLevelValue) scm.Permission {
	switch {
	case level >= gl.OwnerPermissions:
		return scm.PermissionAdmin
	case level >= gl.MaintainerPermissions:
		return scm.PermissionMaintain
	case level >= gl.DeveloperPermissions:
		return scm.PermissionWrite
	case level >= gl.ReporterPermissions:
		return scm.PermissionTriage
	case level >= gl.GuestPermissions:
		return scm.PermissionRead
	}
	return scm.PermissionNone
}

// TeamMember implements scm.TeamReader. A GitLab team is a group: org/slug is the group's full
// path (slug may name a subgroup path, "platform/releasers"). user is a member when GET
// /groups/:id/members/all/:user_id finds an active membership of at least guest: direct,
// inherited from an ancestor group, or through a group shared with it, as GitLab counts
// members. Unlike GitHub's child teams, members of a subgroup are not members of its parent. A
// user or group GitLab does not know, or one the token cannot see (GitLab answers 404), is
// false; a pending invitation is not a membership.
func (c *Client) TeamMember(ctx context.Context, org, slug, user string) (bool, error) {
	path := org + "/" + slug
	what := "membership of user " + user + " in group " + path
	if !validSegment(org) || strings.Contains(org, "/") || !validGroupPath(slug) {
		return false, fmt.Errorf("%s: %q/%q is not a group path", what, org, slug)
	}
	id, err := c.userID(ctx, user)
	if scm.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	m, resp, err := c.api.GroupMembers.GetInheritedGroupMember(path, id, gl.WithContext(ctx))
	if err != nil {
		err = mapError(err, resp, what)
		var unauthorized *scm.UnauthorizedError
		if scm.IsNotFound(err) || errors.As(err, &unauthorized) && unauthorized.StatusCode == 403 {
			return false, nil
		}
		return false, err
	}
	return strings.EqualFold(m.State, "active") && m.AccessLevel >= gl.GuestPermissions, nil
}

// validGroupPath tells whether s is one or more group path segments.
func validGroupPath(s string) bool {
	for _, seg := range strings.Split(s, "/") {
		if !validSegment(seg) {
			return false
		}
	}
	return true
}
