package gitlab

import (
	"testing"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestPermission_readsEffectiveAccessLevels(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	// grace is a maintainer through a group shared with acme; heidi's group membership is
	// capped by the share's level.
	w.fake.AddUser("grace")
	w.fake.AddUser("heidi")
	w.fake.AddGroup("partners")
	w.fake.AddGroupMember("partners", "grace", gl.MaintainerPermissions)
	w.fake.AddGroupMember("partners", "heidi", gl.OwnerPermissions)
	w.fake.ShareGroup("acme", "partners", gl.MaintainerPermissions)
	w.fake.AddUser("ivan")
	w.fake.AddProjectMember(testProject, "ivan", gl.DeveloperPermissions)
	w.fake.BlockUser("ivan")
	c := w.client(t, Options{})
	for user, want := range map[string]scm.Permission{
		"alice": scm.PermissionAdmin,    // owner of the group
		"bob":   scm.PermissionWrite,    // developer
		"carol": scm.PermissionTriage,   // reporter
		"dave":  scm.PermissionRead,     // guest
		"erin":  scm.PermissionNone,     // no role
		"frank": scm.PermissionNone,     // a member of another group only
		"grace": scm.PermissionMaintain, // through a shared group
		"heidi": scm.PermissionMaintain, // owner of the shared group, capped at maintainer
		"ivan":  scm.PermissionNone,     // blocked
		"ALICE": scm.PermissionAdmin,    // usernames are case-insensitive
	} {
		got, err := c.Permission(ctx, user)
		if err != nil || got != want {
			t.Errorf("Permission(%s) = %q, %v; want %q", user, got, err, want)
		}
	}
	if _, err := c.Permission(ctx, "nobody"); !scm.IsNotFound(err) {
		t.Fatalf("Permission(nobody) = %v; want a NotFoundError", err)
	}
	// A project the token cannot see is not found, rather than everyone's "none".
	hidden := w.client(t, Options{Project: "acme/secret"})
	w.fake.CreateProject("acme/secret", "main", map[string]string{"a": "b"}, "alice")
	if _, err := hidden.Permission(ctx, "alice"); !scm.IsNotFound(err) {
		t.Fatalf("Permission on a project the bot is not in = %v; want a NotFoundError", err)
	}
}

func TestTeamMember_aTeamIsAGroupAsGitLabCountsItsMembers(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	// The bot can see the groups it asks about: it is a member of acme/platform.
	w.fake.AddGroupMember("acme/platform", "sluice-bot", gl.ReporterPermissions)
	w.fake.AddGroup("hidden/team")
	w.fake.AddGroupMember("hidden/team", "frank", gl.DeveloperPermissions)
	c := w.client(t, Options{})
	for _, tt := range []struct {
		org, slug, user string
		want            bool
	}{
		{"acme", "platform/releasers", "frank", true}, // a direct member
		{"acme", "platform/releasers", "alice", true}, // inherited from acme
		{"acme", "platform", "frank", false},          // a subgroup's member is not the parent's
		{"acme", "platform/releasers", "bob", false},  // a project member only
		{"acme", "platform/missing", "frank", false},  // no such group
		{"hidden", "team", "frank", false},            // a group the bot cannot see
		{"acme", "platform/releasers", "nobody", false},
	} {
		got, err := c.TeamMember(ctx, tt.org, tt.slug, tt.user)
		if err != nil || got != tt.want {
			t.Errorf("TeamMember(%s, %s, %s) = %v, %v; want %v", tt.org, tt.slug, tt.user, got, err, tt.want)
		}
	}
	if _, err := c.TeamMember(ctx, "acme", "../x", "frank"); err == nil {
		t.Fatal("a malformed group path was accepted")
	}
}
