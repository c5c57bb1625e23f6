package gitea

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// mergeTimeout bounds how long MergePullRequest waits for Gitea to have checked a pull
// request.
const mergeTimeout = time.Minute

// Repo is a repository on the server.
type Repo struct {
	// Owner is the owning user's or organisation's name.
	Owner string
	// Name is the repository's name.
	Name string
	// DefaultBranch is the branch it was created with, "main".
	DefaultBranch string
	// CloneURL is its HTTP Git URL.
	CloneURL string

	server *Server
}

// FullName is "owner/name".
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

// CreateRepo creates a repository of owner (in the organisation org when
// set), initialised with a README commit on "main".
func (s *Server) CreateRepo(ctx context.Context, owner *User, org, name string) (*Repo, error) {
	api, err := owner.API(ctx)
	if err != nil {
		return nil, err
	}
	opt := sdk.CreateRepoOption{Name: name, AutoInit: true, Readme: "Default", DefaultBranch: "main"}
	var created *sdk.Repository
	if org != "" {
		created, _, err = api.CreateOrgRepo(org, opt)
	} else {
		created, _, err = api.CreateRepo(opt)
	}
	if err != nil {
		return nil, fmt.Errorf("creating repository %s: %w", name, err)
	}
	return &Repo{Owner: created.Owner.UserName, Name: created.Name, DefaultBranch: created.DefaultBranch, CloneURL: created.CloneURL, server: s}, nil
}

// AddCollaborator gives u permission (read, write or admin) on the
// repository; by must administer it.
func (r *Repo) AddCollaborator(ctx context.Context, by, u *User, permission sdk.AccessMode) error {
	api, err := by.API(ctx)
	if err != nil {
		return err
	}
	if _, err := api.AddCollaborator(r.Owner, r.Name, u.Login, sdk.AddCollaboratorOption{Permission: &permission}); err != nil {
		return fmt.Errorf("adding %s to %s as %s: %w", u.Login, r.FullName(), permission, err)
	}
	return nil
}

// Webhook describes a repository webhook of type "gitea".
type Webhook struct {
	// URL receives the deliveries.
	URL string
	// Secret signs them (X-Gitea-Signature).
	Secret string
	// ContentType is "json" (the default) or "form".
	ContentType string
	// Events are Gitea's event names, e.g. "push", "pull_request", "pull_request_label",
	// "pull_request_sync", "issue_comment", "pull_request_comment".
	Events []string
}

// CreateWebhook adds a webhook to the repository; by must administer it.
func (r *Repo) CreateWebhook(ctx context.Context, by *User, h Webhook) (*sdk.Hook, error) {
	api, err := by.API(ctx)
	if err != nil {
		return nil, err
	}
	if h.ContentType == "" {
		h.ContentType = "json"
	}
	hook, _, err := api.CreateRepoHook(r.Owner, r.Name, sdk.CreateHookOption{
		Type:   sdk.HookTypeGitea,
		Config: map[string]string{"url": h.URL, "content_type": h.ContentType, "secret": h.Secret},
		Events: h.Events,
		Active: true,
	})
	if err != nil {
		return nil, fmt.Errorf("creating a webhook on %s: %w", r.FullName(), err)
	}
	return hook, nil
}

// EnsureLabels creates the labels the repository lacks; by needs write
// access.
func (r *Repo) EnsureLabels(ctx context.Context, by *User, names ...string) error {
	api, err := by.API(ctx)
	if err != nil {
		return err
	}
	have, err := r.labelIDs(api)
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, ok := have[strings.ToLower(name)]; ok {
			continue
		}
		if _, _, err := api.CreateLabel(r.Owner, r.Name, sdk.CreateLabelOption{Name: name, Color: "#00aabb"}); err != nil {
			return fmt.Errorf("creating label %s on %s: %w", name, r.FullName(), err)
		}
	}
	return nil
}

// labelIDs maps the repository's label names, lower-cased, to their ids.
func (r *Repo) labelIDs(api *sdk.Client) (map[string]int64, error) {
	out := map[string]int64{}
	for page := 1; ; page++ {
		labels, resp, err := api.ListRepoLabels(r.Owner, r.Name, sdk.ListLabelsOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, fmt.Errorf("listing the labels of %s: %w", r.FullName(), err)
		}
		for _, l := range labels {
			out[strings.ToLower(l.Name)] = l.ID
		}
		if resp.NextPage == 0 || len(labels) == 0 {
			return out, nil
		}
	}
}

// AddLabels adds existing labels (see EnsureLabels) to a pull request or
// issue, as by.
func (r *Repo) AddLabels(ctx context.Context, by *User, number int64, names ...string) error {
	api, err := by.API(ctx)
	if err != nil {
		return err
	}
	ids, err := r.labelIDs(api)
	if err != nil {
		return err
	}
	opt := sdk.IssueLabelsOption{}
	for _, name := range names {
		id, ok := ids[strings.ToLower(name)]
		if !ok {
			return fmt.Errorf("adding label %s to %s#%d: no such label", name, r.FullName(), number)
		}
		opt.Labels = append(opt.Labels, id)
	}
	if _, _, err := api.AddIssueLabels(r.Owner, r.Name, number, opt); err != nil {
		return fmt.Errorf("adding labels %v to %s#%d as %s: %w", names, r.FullName(), number, by.Login, err)
	}
	return nil
}

// RemoveLabel removes a label from a pull request or issue, as by.
func (r *Repo) RemoveLabel(ctx context.Context, by *User, number int64, name string) error {
	api, err := by.API(ctx)
	if err != nil {
		return err
	}
	ids, err := r.labelIDs(api)
	if err != nil {
		return err
	}
	id, ok := ids[strings.ToLower(name)]
	if !ok {
		return fmt.Errorf("removing label %s from %s#%d: no such label", name, r.FullName(), number)
	}
	if _, err := api.DeleteIssueLabel(r.Owner, r.Name, number, id); err != nil {
		return fmt.Errorf("removing label %s from %s#%d as %s: %w", name, r.FullName(), number, by.Login, err)
	}
	return nil
}

// Comment posts a comment on a pull request or issue, as by.
func (r *Repo) Comment(ctx context.Context, by *User, number int64, body string) (*sdk.Comment, error) {
	api, err := by.API(ctx)
	if err != nil {
		return nil, err
	}
	c, _, err := api.CreateIssueComment(r.Owner, r.Name, number, sdk.CreateIssueCommentOption{Body: body})
	if err != nil {
		return nil, fmt.Errorf("commenting on %s#%d as %s: %w", r.FullName(), number, by.Login, err)
	}
	return c, nil
}

// OpenPullRequest opens a pull request of head into base, as by.
func (r *Repo) OpenPullRequest(ctx context.Context, by *User, head, base, title string) (*sdk.PullRequest, error) {
	api, err := by.API(ctx)
	if err != nil {
		return nil, err
	}
	pr, _, err := api.CreatePullRequest(r.Owner, r.Name, sdk.CreatePullRequestOption{Head: head, Base: base, Title: title, Body: title})
	if err != nil {
		return nil, fmt.Errorf("opening a pull request of %s into %s on %s: %w", head, base, r.FullName(), err)
	}
	return pr, nil
}

// MergePullRequest merges a pull request with style (merge, squash,
// rebase, rebase-merge), as by, and returns it as merged, with its merge
// commit.
func (r *Repo) MergePullRequest(ctx context.Context, by *User, number int64, style sdk.MergeStyle) (*sdk.PullRequest, error) {
	api, err := by.API(ctx)
	if err != nil {
		return nil, err
	}
	// Gitea checks a new pull request's mergeability in the background and answers 405
	// ("Please try again later") until it is done: try again until a deadline.
	deadline := time.Now().Add(mergeTimeout)
	for {
		ok, resp, err := api.MergePullRequest(r.Owner, r.Name, number, sdk.MergePullRequestOption{Style: style})
		if err != nil {
			return nil, fmt.Errorf("merging %s#%d: %w", r.FullName(), number, err)
		}
		if ok {
			break
		}
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if status != http.StatusMethodNotAllowed || time.Now().After(deadline) {
			return nil, fmt.Errorf("merging %s#%d: Gitea did not merge it (HTTP %d)", r.FullName(), number, status)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("merging %s#%d: %w", r.FullName(), number, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	pr, _, err := api.GetPullRequest(r.Owner, r.Name, number)
	if err != nil {
		return nil, fmt.Errorf("reading merged %s#%d: %w", r.FullName(), number, err)
	}
	if !pr.HasMerged || pr.MergedCommitID == nil || *pr.MergedCommitID == "" {
		return nil, fmt.Errorf("merging %s#%d: the pull request shows no merge commit", r.FullName(), number)
	}
	return pr, nil
}

// BranchHead returns the commit at the head of a branch.
func (r *Repo) BranchHead(ctx context.Context, by *User, branch string) (string, error) {
	api, err := by.API(ctx)
	if err != nil {
		return "", err
	}
	b, _, err := api.GetRepoBranch(r.Owner, r.Name, branch)
	if err != nil {
		return "", fmt.Errorf("reading branch %s of %s: %w", branch, r.FullName(), err)
	}
	return b.Commit.ID, nil
}
