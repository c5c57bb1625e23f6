package git

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commit is one commit as the adapter needs it.
type Commit struct {
	// SHA is the commit's full hexadecimal SHA-1.
	SHA string
	// Message is the full commit message.
	Message string
	// Author wrote the change; Committer made the commit.
	Author, Committer Person
	// Parents are the SHAs of the parent commits, first parent first.
	Parents []string
	// Tree is the SHA of the commit's root tree.
	Tree string
	// Signature is the commit's armored signature (OpenPGP or SSH), empty
	// when unsigned. Use Reader.Verify to check it.
	Signature string
}

// Subject is the first line of the message.
func (c Commit) Subject() string {
	s, _, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n")
	return s
}

// IsMerge reports whether the commit has more than one parent.
func (c Commit) IsMerge() bool { return len(c.Parents) > 1 }

// Person is an author or committer line.
type Person struct {
	// Name and Email as written in the commit; nothing checks them.
	Name, Email string
	// When the commit was authored or committed, in the time zone recorded.
	When time.Time
}

// Arrival is a commit that arrived on a branch.
type Arrival struct {
	Commit
	// Via is the first-parent commit of the branch that brought the commit
	// onto the branch: the commit itself when it is on the first-parent
	// line, the merge commit when it was merged in from a side branch.
	Via string
}

// fromObject converts a go-git commit.
func fromObject(c *object.Commit) Commit {
	parents := make([]string, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		parents[i] = p.String()
	}
	return Commit{
		SHA:       c.Hash.String(),
		Message:   c.Message,
		Author:    Person{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
		Committer: Person{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When},
		Parents:   parents,
		Tree:      c.TreeHash.String(),
		Signature: c.PGPSignature,
	}
}

// shaHexLen is the length of a SHA-1 in hexadecimal.
const shaHexLen = 40

// isFullSHA reports whether s is a full SHA-1 in hexadecimal.
func isFullSHA(s string) bool {
	if len(s) != shaHexLen {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// parseSHA checks that sha is a full SHA-1 and returns its hash.
func parseSHA(sha string) (plumbing.Hash, error) {
	if !isFullSHA(sha) {
		return plumbing.ZeroHash, fmt.Errorf("%w: %q", ErrInvalidSHA, sha)
	}
	return plumbing.NewHash(sha), nil
}

// Commit implements Reader.
func (r *branchReader) Commit(ctx context.Context, sha string) (Commit, error) {
	h, err := parseSHA(sha)
	if err != nil {
		return Commit{}, fmt.Errorf("read commit of %s: %w", r.where(), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.headCommit(); err != nil {
		return Commit{}, err
	}
	c, err := r.commitObject(ctx, h)
	if err != nil {
		return Commit{}, err
	}
	return fromObject(c), nil
}
