package gitopsworld

import (
	"fmt"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/sluice-dev/sluice/test/gitlabfake"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// GitLabProject is a repository of the setting hosted on the fake GitLab
// (test/gitlabfake) rather than GitHub: the Git server holds its commits,
// which Flux and sluice read, and every push to it is mirrored on the fake
// under the same SHAs (gitlabfake's MirrorPush), with the commits' files, so
// that the merge requests, commit statuses and reverts on GitLab name what
// Flux applies.
type GitLabProject struct {
	// Git is the repository on the test Git server.
	Git *gitserver.Repo
	// GitLab is the fake GitLab that hosts it.
	GitLab *gitlabfake.Server
	// Path is its path with its namespace on GitLab ("acme/shop").
	Path string
}

// MergeRequest is a merge request opened with OpenMergeRequest.
type MergeRequest struct {
	// IID is its number in the project.
	IID int64
	// Branch is its source branch, the same name in Git and on GitLab.
	Branch string
	// Title is its title, also the message of its one commit.
	Title string
}

// Signature is the Git identity of a GitLab user of the setting: the name
// and e-mail the fake gives username (its e-mail is username@example.com,
// which GitLab links to the account).
func Signature(username string) *object.Signature {
	return &object.Signature{Name: username, Email: username + "@example.com"}
}

// Push mirrors on GitLab what was pushed to branch in Git since GitLab last
// saw it, as a push by pusher (see gitlabfake's MirrorPush: the Push Hook,
// the branch's open merge requests brought up to date), and returns the
// branch's head. It reads the repository from disk afresh, so that it sees
// pushes made with git by hand.
func (p GitLabProject) Push(branch, pusher string) (string, error) {
	repo, err := gogit.PlainOpen(p.Git.Dir())
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", p.Git.Dir(), err)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return "", fmt.Errorf("reading branch %s: %w", branch, err)
	}
	head := ref.Hash().String()
	if p.GitLab.BranchHead(p.Path, branch) == head {
		return head, nil
	}
	commits, err := unmirrored(repo, ref.Hash(), func(sha string) bool { return p.GitLab.HasCommit(p.Path, sha) })
	if err != nil {
		return "", err
	}
	mirrored := make([]gitlabfake.Commit, 0, len(commits)+1)
	for _, c := range commits {
		m, err := mirrorOf(c)
		if err != nil {
			return "", err
		}
		mirrored = append(mirrored, m)
	}
	if len(mirrored) == 0 { // the branch moved to a commit GitLab knows
		c, err := repo.CommitObject(ref.Hash())
		if err != nil {
			return "", fmt.Errorf("reading commit %s: %w", head, err)
		}
		m, err := mirrorOf(c)
		if err != nil {
			return "", err
		}
		mirrored = append(mirrored, m)
	}
	p.GitLab.MirrorPush(p.Path, branch, pusher, mirrored)
	return head, nil
}

// mirrorOf is the Git commit c as the fake records it, with its files.
func mirrorOf(c *object.Commit) (gitlabfake.Commit, error) {
	m := gitlabfake.Commit{SHA: c.Hash.String(), Message: c.Message, Files: map[string]string{},
		Author: gitlabfake.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When}}
	for _, parent := range c.ParentHashes {
		m.Parents = append(m.Parents, parent.String())
	}
	files, err := c.Files()
	if err != nil {
		return gitlabfake.Commit{}, fmt.Errorf("reading the files of %s: %w", c.Hash, err)
	}
	err = files.ForEach(func(f *object.File) error {
		content, err := f.Contents()
		m.Files[f.Name] = content
		return err
	})
	if err != nil {
		return gitlabfake.Commit{}, fmt.Errorf("reading the files of %s: %w", c.Hash, err)
	}
	return m, nil
}

// Commit writes files on branch in Git as author and pushes it to GitLab.
func (p GitLabProject) Commit(branch, message, author string, files map[string]string) (string, error) {
	if _, err := p.Git.Commit(branch, gitserver.Change{Message: message, Files: files, Author: Signature(author)}); err != nil {
		return "", fmt.Errorf("committing on %s: %w", branch, err)
	}
	return p.Push(branch, author)
}

// OpenMergeRequest opens a merge request by author into main that changes
// files: a branch "mr-<random>" from main's head with one commit by author,
// pushed, and the merge request of it.
func (p GitLabProject) OpenMergeRequest(title, author string, files map[string]string) (MergeRequest, error) {
	return p.OpenMergeRequestOn("mr-"+rand.String(4), title, author, files)
}

// OpenMergeRequestOn opens a merge request as OpenMergeRequest does, from
// the named branch, made (or moved) at main's head first.
func (p GitLabProject) OpenMergeRequestOn(branch, title, author string, files map[string]string) (MergeRequest, error) {
	head, err := p.Git.Head("main")
	if err != nil {
		return MergeRequest{}, err
	}
	if err := p.Git.Branch(branch, head); err != nil {
		return MergeRequest{}, err
	}
	if _, err := p.Commit(branch, title, author, files); err != nil {
		return MergeRequest{}, err
	}
	iid := p.GitLab.OpenMergeRequest(p.Path, author, branch, "main", title)
	return MergeRequest{IID: iid, Branch: branch, Title: title}, nil
}

// Merge merges mr into main as merger, with the merge commit GitLab writes
// (its message, the merger as its author), pushed, and records the merge on
// GitLab. It returns the merge commit.
func (p GitLabProject) Merge(mr MergeRequest, merger string) (string, error) {
	merge, err := p.Git.Merge("main", mr.Branch, gitserver.MergeOptions{
		Message: fmt.Sprintf("Merge branch '%s' into 'main'\n\n%s\n\nSee merge request %s!%d", mr.Branch, mr.Title, p.Path, mr.IID),
		Author:  Signature(merger),
	})
	if err != nil {
		return "", fmt.Errorf("merging !%d: %w", mr.IID, err)
	}
	if _, err := p.Push("main", merger); err != nil {
		return "", err
	}
	p.GitLab.MirrorMerge(p.Path, mr.IID, merge, merger)
	return merge, nil
}

// Revert reverts the commit sha on main as pusher, as `git revert -m 1`
// does for a merge (plain `git revert` otherwise), pushes it and returns it.
func (p GitLabProject) Revert(sha, pusher string) (string, error) {
	c, err := p.Git.CommitObject(sha)
	if err != nil {
		return "", fmt.Errorf("reading commit %s: %w", sha, err)
	}
	o := gitserver.RevertOptions{Author: Signature(pusher)}
	if len(c.ParentHashes) > 1 {
		o.Mainline = 1
	}
	if _, err := p.Git.Revert("main", sha, o); err != nil {
		return "", err
	}
	return p.Push("main", pusher)
}
