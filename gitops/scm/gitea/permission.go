package gitea

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Permission implements scm.PermissionReader with GET
// /repos/{owner}/{repo}/collaborators/{user}/permission. Gitea's access modes are none, read,
// write, admin and owner (the repository's owner, or an owner of its organisation); owner reads
// as admin. Gitea answers only a site administrator, a repository administrator, or the user
// asking about themselves: a token of anyone else gets an UnauthorizedError.
func (c *Client) Permission(ctx context.Context, user string) (scm.Permission, error) {
	res, resp, err := c.api(ctx).CollaboratorPermission(c.owner, c.repo, user)
	if err != nil {
		return "", c.mapError(err, resp, "permission of user "+user)
	}
	if res == nil {
		return "", fmt.Errorf("permission of user %s: the server answered %d", user, statusOf(resp))
	}
	mode := strings.ToLower(strings.TrimSpace(string(res.Permission)))
	if mode == "owner" {
		return scm.PermissionAdmin, nil
	}
	p, err := scm.ParsePermission(mode)
	if err != nil {
		return "", fmt.Errorf("permission of user %s: %w", user, err)
	}
	return p, nil
}
