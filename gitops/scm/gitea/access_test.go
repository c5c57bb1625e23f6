package gitea

import (
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestPermission_readsEachUsersRole(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	dave, err := world.server.CreateUser(ctx, "dave-"+repo.Name)
	check(t, err)
	c := newClient(t, repo, Options{})
	for _, tt := range []struct {
		user string
		want scm.Permission
	}{
		{world.alice.Login, scm.PermissionAdmin}, // owner of the organisation
		{world.sluice.Login, scm.PermissionAdmin},
		{world.bob.Login, scm.PermissionWrite},
		{world.carol.Login, scm.PermissionRead},
		{dave.Login, scm.PermissionRead}, // anyone may read a public repository
	} {
		got, err := c.Permission(ctx, tt.user)
		if err != nil || got != tt.want {
			t.Errorf("Permission(%s) = %q, %v; want %q", tt.user, got, err, tt.want)
		}
	}
	if _, err := c.Permission(ctx, "nobody-at-all"); !scm.IsNotFound(err) {
		t.Errorf("Permission of an unknown user = %v, want a NotFoundError", err)
	}

	// A token whose user does not administer the repository may not read others' permissions.
	asBob := newClient(t, repo, Options{Token: world.bob.Token})
	if _, err := asBob.Permission(ctx, world.carol.Login); !scm.IsUnauthorized(err) {
		t.Errorf("Permission read by a writer = %v, want an UnauthorizedError", err)
	}
}

func TestTeamMember_seesTheTeamsItBelongsTo(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	// Given a team the bot belongs to, with carol, and a team it does not belong to, with carol.
	deployers, err := world.org.CreateTeam(ctx, "deployers-"+repo.Name, sdk.AccessModeRead, false, world.carol, world.sluice)
	check(t, err)
	auditors, err := world.org.CreateTeam(ctx, "auditors-"+repo.Name, sdk.AccessModeRead, false, world.carol)
	check(t, err)
	c := newClient(t, repo, Options{})
	for _, tt := range []struct {
		org, team, user string
		want            bool
	}{
		{world.org.Name, deployers.Name, world.carol.Login, true},
		{world.org.Name, strings.ToUpper(deployers.Name), world.carol.Login, true}, // names compare case-insensitively
		{world.org.Name, deployers.Name, world.bob.Login, false},
		{world.org.Name, auditors.Name, world.carol.Login, false}, // the bot cannot see it
		{world.org.Name, "no-such-team", world.carol.Login, false},
		{"no-such-org", "deployers", world.carol.Login, false},
	} {
		got, err := c.TeamMember(ctx, tt.org, tt.team, tt.user)
		if err != nil || got != tt.want {
			t.Errorf("TeamMember(%s/%s, %s) = %v, %v; want %v", tt.org, tt.team, tt.user, got, err, tt.want)
		}
	}

	// When carol leaves the team, she is no longer a member.
	check(t, deployers.RemoveMember(ctx, world.carol))
	if got, err := c.TeamMember(ctx, world.org.Name, deployers.Name, world.carol.Login); err != nil || got {
		t.Fatalf("TeamMember after leaving = %v, %v; want false", got, err)
	}
	if _, err := c.TeamMember(ctx, world.org.Name, "a/b", world.carol.Login); err == nil {
		t.Fatal("TeamMember accepted a team name with a slash")
	}
}
