package github

import (
	"context"
	"fmt"
	"net/url"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// permissionLevel is GitHub's answer for a collaborator's permission. go-github v56 does not
// decode role_name, which alone tells maintain and triage apart from write and read.
type permissionLevel struct {
	Permission string `json:"permission"`
	RoleName   string `json:"role_name"`
}

// Permission implements scm.PermissionReader. The role (admin, maintain, write, triage, read)
// is preferred; a custom role falls back to the base permission it extends.
func (c *Client) Permission(ctx context.Context, user string) (scm.Permission, error) {
	path := fmt.Sprintf("repos/%s/%s/collaborators/%s/permission",
		url.PathEscape(c.owner), url.PathEscape(c.repo), url.PathEscape(user))
	req, err := c.gh.NewRequest("GET", path, nil)
	if err != nil {
		return "", err
	}
	var level permissionLevel
	resp, err := c.gh.Do(ctx, req, &level)
	if err != nil {
		return "", mapError(err, resp, "permission of user "+user, c.now())
	}
	if p, err := scm.ParsePermission(level.RoleName); err == nil {
		return p, nil
	}
	p, err := scm.ParsePermission(level.Permission)
	if err != nil {
		return "", fmt.Errorf("permission of user %s: %w", user, err)
	}
	return p, nil
}
