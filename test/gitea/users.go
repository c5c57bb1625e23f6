package gitea

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// requestTimeout bounds one API request of the helpers.
const requestTimeout = 30 * time.Second

// User is a Gitea account with a token.
type User struct {
	// Login is the user's name.
	Login string
	// Password is the user's password (basic authentication, HTTP Git).
	Password string
	// Email is the user's (and their commits') e-mail address.
	Email string
	// Token is an access token of the user; Start gives the administrator's
	// every scope, CreateUser gives a user's the scopes asked for.
	Token string

	server *Server
}

// API returns a client of Gitea's API that authenticates with the user's
// token and sends its requests with ctx.
func (u *User) API(ctx context.Context) (*sdk.Client, error) {
	return u.server.client(ctx, sdk.SetToken(u.Token))
}

// client builds an SDK client for one call chain: the SDK takes its context
// at construction, and the server's version is known, so none is asked for.
func (s *Server) client(ctx context.Context, auth ...sdk.ClientOption) (*sdk.Client, error) {
	opts := append([]sdk.ClientOption{
		sdk.SetContext(ctx),
		sdk.SetHTTPClient(&http.Client{Timeout: requestTimeout}),
		sdk.SetGiteaVersion(s.Version),
	}, auth...)
	c, err := sdk.NewClient(strings.TrimSuffix(s.URL, "/"), opts...)
	if err != nil {
		return nil, fmt.Errorf("gitea client: %w", err)
	}
	return c, nil
}

// ScopeAll is the token scope that grants everything.
const ScopeAll = "all"

// CreateUser creates an active user (through the administrator) with a
// token of the given scopes (ScopeAll when none; others are Gitea's scope
// names, e.g. "write:repository", "read:organization", "read:user").
func (s *Server) CreateUser(ctx context.Context, login string, scopes ...string) (*User, error) {
	admin, err := s.Admin.API(ctx)
	if err != nil {
		return nil, err
	}
	u := &User{Login: login, Password: login + "-password", Email: login + "@sluice.test", server: s}
	mustChange := false
	if _, _, err := admin.AdminCreateUser(sdk.CreateUserOption{
		Username: u.Login, Email: u.Email, Password: u.Password, MustChangePassword: &mustChange,
	}); err != nil {
		return nil, fmt.Errorf("creating user %s: %w", login, err)
	}
	if u.Token, err = s.CreateToken(ctx, u, "sluice-test", scopes...); err != nil {
		return nil, err
	}
	return u, nil
}

// CreateToken creates another token of u with the given scopes (ScopeAll
// when none) and returns it. Gitea creates tokens only for a user who signs
// in with their password.
func (s *Server) CreateToken(ctx context.Context, u *User, name string, scopes ...string) (string, error) {
	if len(scopes) == 0 {
		scopes = []string{ScopeAll}
	}
	basic, err := s.client(ctx, sdk.SetBasicAuth(u.Login, u.Password))
	if err != nil {
		return "", err
	}
	opt := sdk.CreateAccessTokenOption{Name: name}
	for _, sc := range scopes {
		opt.Scopes = append(opt.Scopes, sdk.AccessTokenScope(sc))
	}
	tok, _, err := basic.CreateAccessToken(opt)
	if err != nil {
		return "", fmt.Errorf("creating token %s of user %s: %w", name, u.Login, err)
	}
	return tok.Token, nil
}

// Org is an organisation.
type Org struct {
	// Name is the organisation's name.
	Name string
	// Owner is the user who created it, an owner.
	Owner *User
}

// CreateOrg creates an organisation owned by owner.
func (s *Server) CreateOrg(ctx context.Context, owner *User, name string) (*Org, error) {
	api, err := owner.API(ctx)
	if err != nil {
		return nil, err
	}
	if _, _, err := api.CreateOrg(sdk.CreateOrgOption{Name: name, Visibility: sdk.VisibleTypePublic}); err != nil {
		return nil, fmt.Errorf("creating organisation %s: %w", name, err)
	}
	return &Org{Name: name, Owner: owner}, nil
}

// Team is a team of an organisation.
type Team struct {
	// ID is Gitea's id of the team.
	ID int64
	// Name is the team's name, unique in its organisation.
	Name string
	// Org is the team's organisation.
	Org *Org
}

// CreateTeam creates a team with permission on the organisation's
// repositories (read, write or admin; all of them when allRepositories,
// else those added with AddRepository) and adds members to it.
func (o *Org) CreateTeam(ctx context.Context, name string, permission sdk.AccessMode, allRepositories bool, members ...*User) (*Team, error) {
	api, err := o.Owner.API(ctx)
	if err != nil {
		return nil, err
	}
	units := []sdk.RepoUnitType{sdk.RepoUnitCode, sdk.RepoUnitIssues, sdk.RepoUnitPulls, sdk.RepoUnitReleases, sdk.RepoUnitWiki}
	t, _, err := api.CreateTeam(o.Name, sdk.CreateTeamOption{
		Name: name, Permission: permission, IncludesAllRepositories: allRepositories, Units: units,
	})
	if err != nil {
		return nil, fmt.Errorf("creating team %s/%s: %w", o.Name, name, err)
	}
	team := &Team{ID: t.ID, Name: t.Name, Org: o}
	for _, m := range members {
		if err := team.AddMember(ctx, m); err != nil {
			return nil, err
		}
	}
	return team, nil
}

// AddMember adds u to the team.
func (t *Team) AddMember(ctx context.Context, u *User) error {
	api, err := t.Org.Owner.API(ctx)
	if err != nil {
		return err
	}
	if _, err := api.AddTeamMember(t.ID, u.Login); err != nil {
		return fmt.Errorf("adding %s to team %s/%s: %w", u.Login, t.Org.Name, t.Name, err)
	}
	return nil
}

// RemoveMember removes u from the team.
func (t *Team) RemoveMember(ctx context.Context, u *User) error {
	api, err := t.Org.Owner.API(ctx)
	if err != nil {
		return err
	}
	if _, err := api.RemoveTeamMember(t.ID, u.Login); err != nil {
		return fmt.Errorf("removing %s from team %s/%s: %w", u.Login, t.Org.Name, t.Name, err)
	}
	return nil
}

// AddRepository gives the team access to a repository of its organisation.
func (t *Team) AddRepository(ctx context.Context, r *Repo) error {
	api, err := t.Org.Owner.API(ctx)
	if err != nil {
		return err
	}
	if _, err := api.AddTeamRepository(t.ID, r.Owner, r.Name); err != nil {
		return fmt.Errorf("adding %s to team %s/%s: %w", r.FullName(), t.Org.Name, t.Name, err)
	}
	return nil
}
