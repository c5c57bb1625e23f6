package gitea

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Checkout is an in-memory clone of a repository that a user commits to
// and pushes from, over HTTP with basic authentication.
type Checkout struct {
	repo *git.Repository
	wt   *git.Worktree
	user *User
	auth *githttp.BasicAuth
}

// Clone clones r as u (every branch), with the default branch checked out.
func (r *Repo) Clone(ctx context.Context, u *User) (*Checkout, error) {
	auth := &githttp.BasicAuth{Username: u.Login, Password: u.Password}
	repo, err := git.CloneContext(ctx, memory.NewStorage(), memfs.New(), &git.CloneOptions{URL: r.CloneURL, Auth: auth})
	if err != nil {
		return nil, fmt.Errorf("cloning %s as %s: %w", r.CloneURL, u.Login, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, err
	}
	return &Checkout{repo: repo, wt: wt, user: u, auth: auth}, nil
}

// Change is one commit's changes.
type Change struct {
	// Write sets files (path -> content).
	Write map[string]string
	// Delete removes files.
	Delete []string
	// Message is the commit message.
	Message string
}

// Commit commits ch on branch, which is created from the commit now checked
// out when it does not exist yet, and returns the new commit. The author and
// committer are the checkout's user.
func (c *Checkout) Commit(branch string, ch Change) (string, error) {
	ref := plumbing.NewBranchReferenceName(branch)
	if err := c.switchTo(ref); err != nil {
		return "", err
	}
	for p, content := range ch.Write {
		if err := c.wt.Filesystem.MkdirAll(path.Dir(p), 0o755); err != nil {
			return "", err
		}
		f, err := c.wt.Filesystem.Create(p)
		if err != nil {
			return "", err
		}
		_, werr := f.Write([]byte(content))
		cerr := f.Close()
		if err := errors.Join(werr, cerr); err != nil {
			return "", err
		}
		if _, err := c.wt.Add(p); err != nil {
			return "", fmt.Errorf("adding %s: %w", p, err)
		}
	}
	for _, p := range ch.Delete {
		if _, err := c.wt.Remove(p); err != nil {
			return "", fmt.Errorf("removing %s: %w", p, err)
		}
	}
	sig := &object.Signature{Name: c.user.Login, Email: c.user.Email, When: time.Now()}
	h, err := c.wt.Commit(ch.Message, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		return "", fmt.Errorf("committing on %s: %w", branch, err)
	}
	return h.String(), nil
}

// switchTo checks out the local branch ref, creating it at HEAD (from the
// remote branch of that name when there is one) when it does not exist.
func (c *Checkout) switchTo(ref plumbing.ReferenceName) error {
	head, err := c.repo.Head()
	if err != nil {
		return err
	}
	if head.Name() == ref {
		return nil
	}
	if _, err := c.repo.Reference(ref, true); err == nil {
		return c.wt.Checkout(&git.CheckoutOptions{Branch: ref})
	}
	from := head.Hash()
	if remote, err := c.repo.Reference(plumbing.NewRemoteReferenceName("origin", ref.Short()), true); err == nil {
		from = remote.Hash()
	}
	return c.wt.Checkout(&git.CheckoutOptions{Branch: ref, Hash: from, Create: true})
}

// Push pushes the local branch to the server.
func (c *Checkout) Push(ctx context.Context, branch string) error {
	ref := plumbing.NewBranchReferenceName(branch)
	err := c.repo.PushContext(ctx, &git.PushOptions{
		Auth:     c.auth,
		RefSpecs: []gitconfig.RefSpec{gitconfig.RefSpec(ref + ":" + ref)},
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("pushing %s as %s: %w", branch, c.user.Login, err)
	}
	return nil
}

// Pull fetches every branch from the server and moves the checked-out
// branch to its remote head.
func (c *Checkout) Pull(ctx context.Context) error {
	err := c.repo.FetchContext(ctx, &git.FetchOptions{
		Auth:     c.auth,
		RefSpecs: []gitconfig.RefSpec{"+refs/heads/*:refs/remotes/origin/*"},
		Force:    true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetching as %s: %w", c.user.Login, err)
	}
	head, err := c.repo.Head()
	if err != nil {
		return err
	}
	remote, err := c.repo.Reference(plumbing.NewRemoteReferenceName("origin", head.Name().Short()), true)
	if err != nil {
		return fmt.Errorf("no remote branch %s: %w", head.Name().Short(), err)
	}
	return c.wt.Reset(&git.ResetOptions{Commit: remote.Hash(), Mode: git.HardReset})
}

// CommitAndPush commits ch on branch and pushes it, returning the commit.
func (c *Checkout) CommitAndPush(ctx context.Context, branch string, ch Change) (string, error) {
	sha, err := c.Commit(branch, ch)
	if err != nil {
		return "", err
	}
	return sha, c.Push(ctx, branch)
}

// Switch checks out branch (see Commit for how a missing one is created).
func (c *Checkout) Switch(branch string) error {
	return c.switchTo(plumbing.NewBranchReferenceName(branch))
}
