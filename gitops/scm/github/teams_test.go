package github

import (
	"context"
	"net/http"
	"testing"

	"github.com/sluice-dev/sluice/test/githubfake"
)

func TestTeamReader_membership(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	fake.SetTeamMembership("acme/release-managers", "ann", githubfake.MembershipActive)
	fake.SetTeamMembership("acme/release-managers", "pat", githubfake.MembershipPending)
	fake.SetTeamMembership("acme/Platform", "wes", githubfake.MembershipActive)
	tests := []struct {
		name, org, slug, user string
		want                  bool
	}{
		{name: "active member", org: "acme", slug: "release-managers", user: "ann", want: true},
		{name: "pending invitation", org: "acme", slug: "release-managers", user: "pat", want: false},
		{name: "not a member", org: "acme", slug: "release-managers", user: "wes", want: false},
		{name: "member of another team", org: "acme", slug: "platform", user: "wes", want: true},
		{name: "unknown team", org: "acme", slug: "nobody-here", user: "ann", want: false},
		{name: "unknown organisation", org: "other", slug: "release-managers", user: "ann", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.TeamMember(context.Background(), tt.org, tt.slug, tt.user)
			if err != nil || got != tt.want {
				t.Fatalf("TeamMember(%s/%s, %s) = %v, %v; want %v", tt.org, tt.slug, tt.user, got, err, tt.want)
			}
		})
	}
	if n := fake.Count("teams/get-membership-for-user-in-org"); n != len(tests) {
		t.Errorf("%d membership requests, want %d", n, len(tests))
	}
}

func TestTeamReader_unauthorizedIsAnError(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c, err := New(Options{Owner: "acme", Repo: "app", BaseURL: fake.URL, Token: "wrong", Now: clock.Now, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	fake.SetTeamMembership("acme/release-managers", "ann", githubfake.MembershipActive)
	got, err := c.TeamMember(context.Background(), "acme", "release-managers", "ann")
	if err == nil || got {
		t.Fatalf("TeamMember with a bad token = %v, %v; want an error", got, err)
	}
	if reqs := fake.Requests(); len(reqs) == 0 || reqs[len(reqs)-1].Status != http.StatusUnauthorized {
		t.Fatalf("requests %+v, want a 401", reqs)
	}
}
