package gitea

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// Revert does what `git revert -m 1 <sha>` followed by a push does: it
// brings branch up to date with the server, commits the changes that sha
// made against its first parent undone, with the message git writes, and
// pushes. It returns the revert commit. A change that later commits
// touched again is undone all the same (the file is set to the first
// parent's content): the stories revert the commit on top.
func (c *Checkout) Revert(ctx context.Context, branch, sha string) (string, error) {
	if err := c.switchTo(plumbing.NewBranchReferenceName(branch)); err != nil {
		return "", err
	}
	if err := c.Pull(ctx); err != nil {
		return "", err
	}
	target, err := c.repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return "", fmt.Errorf("reverting %s: %w", sha, err)
	}
	parent, err := target.Parent(0)
	if err != nil {
		return "", fmt.Errorf("reverting %s: its first parent: %w", sha, err)
	}
	ch, err := undo(parent, target)
	if err != nil {
		return "", fmt.Errorf("reverting %s: %w", sha, err)
	}
	ch.Message = gitserver.RevertMessage(target, parent.Hash)
	return c.CommitAndPush(ctx, branch, ch)
}

// undo is the change that sets every file target changed back to parent's
// content.
func undo(parent, target *object.Commit) (Change, error) {
	from, err := parent.Tree()
	if err != nil {
		return Change{}, err
	}
	to, err := target.Tree()
	if err != nil {
		return Change{}, err
	}
	changes, err := object.DiffTree(from, to)
	if err != nil {
		return Change{}, err
	}
	if len(changes) == 0 {
		return Change{}, fmt.Errorf("it changes nothing against its first parent")
	}
	ch := Change{Write: map[string]string{}}
	for _, c := range changes {
		before, after, err := c.Files()
		if err != nil {
			return Change{}, err
		}
		// A file's Name is its base name; the change's names are the paths.
		if after != nil && (before == nil || c.From.Name != c.To.Name) {
			ch.Delete = append(ch.Delete, c.To.Name)
		}
		if before != nil {
			content, err := before.Contents()
			if err != nil {
				return Change{}, err
			}
			ch.Write[c.From.Name] = content
		}
	}
	return ch, nil
}
