package git

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// headCommit reads the branch head of the last fetch.
func (r *branchReader) headCommit() (*object.Commit, error) {
	ref, err := r.st.Reference(r.trackingRef())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.where(), ErrNotFetched)
	}
	c, err := object.GetCommit(r.st, ref.Hash())
	if err != nil {
		return nil, fmt.Errorf("%s: head %s: %w", r.where(), ref.Hash(), err)
	}
	return c, nil
}

// commitObject reads a commit, deepening the copy until it is there or
// the whole history has been fetched.
func (r *branchReader) commitObject(ctx context.Context, h plumbing.Hash) (*object.Commit, error) {
	for {
		c, err := object.GetCommit(r.st, h)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("%s: commit %s: %w", r.where(), h, err)
		}
		more, err := r.deepen(ctx)
		if err != nil {
			return nil, err
		}
		if !more {
			return nil, fmt.Errorf("%s: commit %s: %w", r.where(), h, ErrCommitNotFound)
		}
	}
}

// parentCommits reads the parents of c, deepening the copy when c is at
// its shallow boundary.
func (r *branchReader) parentCommits(ctx context.Context, c *object.Commit) ([]*object.Commit, error) {
	out := make([]*object.Commit, 0, len(c.ParentHashes))
	for _, p := range c.ParentHashes {
		pc, err := r.commitObject(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("parent of %s: %w", c.Hash, err)
		}
		out = append(out, pc)
	}
	return out, nil
}

// deepen fetches more of the branch's history: twice the depth of the last
// deepening, and the whole history once that passes maxStepDepth. It
// reports false when the copy holds the whole history already.
func (r *branchReader) deepen(ctx context.Context) (bool, error) {
	if r.complete {
		return false, nil
	}
	shallow, err := r.st.Shallow()
	if err != nil {
		return false, fmt.Errorf("%s: read shallow list: %w", r.where(), err)
	}
	if len(shallow) == 0 {
		r.complete = true
		return false, nil
	}
	next := 2 * r.depth
	if next < DefaultDepth {
		next = DefaultDepth
	}
	if next > maxStepDepth {
		next = infiniteDepth
	}
	if err := r.fetch(ctx, deepenRef, next); err != nil {
		return false, fmt.Errorf("deepen to %d commits: %w", next, err)
	}
	r.depth = next
	if next == infiniteDepth {
		r.complete = true
	}
	if err := r.pruneShallow(); err != nil {
		return false, err
	}
	return true, nil
}

// pruneShallow drops from the shallow list the commits whose parents are
// all present now. go-git adds the new boundary after a deepening fetch but
// does not apply the server's "unshallow" lines; a stale entry would make
// the server resend history on the next deepening.
func (r *branchReader) pruneShallow() error {
	shallow, err := r.st.Shallow()
	if err != nil {
		return fmt.Errorf("%s: read shallow list: %w", r.where(), err)
	}
	keep := shallow[:0:0]
	for _, h := range shallow {
		c, err := object.GetCommit(r.st, h)
		if err != nil {
			continue // not here at all: nothing to mark
		}
		for _, p := range c.ParentHashes {
			if _, err := r.st.EncodedObject(plumbing.CommitObject, p); err != nil {
				keep = append(keep, h)
				break
			}
		}
	}
	if len(keep) == len(shallow) {
		return nil
	}
	if err := r.st.SetShallow(keep); err != nil {
		return fmt.Errorf("%s: write shallow list: %w", r.where(), err)
	}
	return nil
}
