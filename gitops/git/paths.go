package git

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxIntroducedDepth bounds how far back Introduced looks for the commit
// that brought a value.
const maxIntroducedDepth = 500

// CleanPath turns a path as a GitOps tool names it ("./apps", "apps/",
// "/apps/checkout.yaml", ".") into a path inside the repository ("apps",
// "apps/checkout.yaml", "" for the whole tree).
func CleanPath(p string) string {
	p = path.Clean("/" + strings.TrimSpace(p))
	return strings.TrimPrefix(p, "/")
}

// Touches implements Reader.
func (r *branchReader) Touches(ctx context.Context, sha string, paths []string) (bool, error) {
	h, err := parseSHA(sha)
	if err != nil {
		return false, fmt.Errorf("paths of a commit of %s: %w", r.where(), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.headCommit(); err != nil {
		return false, err
	}
	c, err := r.commitObject(ctx, h)
	if err != nil {
		return false, err
	}
	var parent *object.Commit
	if len(c.ParentHashes) > 0 {
		if parent, err = r.commitObject(ctx, c.ParentHashes[0]); err != nil {
			return false, fmt.Errorf("parent of %s: %w", c.Hash, err)
		}
	}
	if len(paths) == 0 {
		paths = []string{""}
	}
	for _, p := range paths {
		p = CleanPath(p)
		now, err := entryAt(c, p)
		if err != nil {
			return false, err
		}
		before := plumbing.ZeroHash
		if parent != nil {
			if before, err = entryAt(parent, p); err != nil {
				return false, err
			}
		}
		if now != before {
			return true, nil
		}
	}
	return false, nil
}

// entryAt is the hash of the tree or blob at p in c's tree (the root tree
// for ""); the zero hash when nothing is there.
func entryAt(c *object.Commit, p string) (plumbing.Hash, error) {
	t, err := c.Tree()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("tree of %s: %w", c.Hash, err)
	}
	if p == "" {
		return t.Hash, nil
	}
	e, err := t.FindEntry(p)
	switch {
	case errors.Is(err, object.ErrEntryNotFound), errors.Is(err, object.ErrDirectoryNotFound):
		return plumbing.ZeroHash, nil
	case err != nil:
		return plumbing.ZeroHash, fmt.Errorf("%s in %s: %w", p, c.Hash, err)
	}
	return e.Hash, nil
}

// Introduced implements Reader.
func (r *branchReader) Introduced(ctx context.Context, dir, needle string) (Arrival, error) {
	if needle == "" {
		return Arrival{}, fmt.Errorf("%w: nothing to look for", ErrInvalidOptions)
	}
	dir = CleanPath(dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.headCommit()
	if err != nil {
		return Arrival{}, err
	}
	memo := map[plumbing.Hash]bool{} // tree at dir -> holds needle
	holds := func(c *object.Commit) (bool, error) {
		h, err := entryAt(c, dir)
		if err != nil || h.IsZero() {
			return false, err
		}
		if v, ok := memo[h]; ok {
			return v, nil
		}
		v, err := containsText(c, dir, needle)
		if err != nil {
			return false, err
		}
		memo[h] = v
		return v, nil
	}
	ok, err := holds(c)
	if err != nil {
		return Arrival{}, err
	}
	if !ok {
		return Arrival{}, fmt.Errorf("%s: %q under %q at the head: %w", r.where(), needle, dir, ErrCommitNotFound)
	}
	via := c.Hash
	onLine := true
	for range maxIntroducedDepth {
		if err := ctx.Err(); err != nil {
			return Arrival{}, err
		}
		parents, err := r.parentCommits(ctx, c)
		if err != nil {
			return Arrival{}, err
		}
		var next *object.Commit
		for i, p := range parents {
			ok, err := holds(p)
			if err != nil {
				return Arrival{}, err
			}
			if ok {
				next = p
				if i > 0 {
					onLine = false // merged in from a side branch
				}
				break
			}
		}
		if next == nil {
			return Arrival{Commit: fromObject(c), Via: via.String()}, nil
		}
		c = next
		if onLine {
			via = c.Hash
		}
	}
	return Arrival{}, fmt.Errorf("%s: the commit that brought %q is more than %d commits back: %w", r.where(), needle, maxIntroducedDepth, ErrCommitNotFound)
}

// containsText reports whether a file at or under p in c's tree contains
// needle.
func containsText(c *object.Commit, p, needle string) (bool, error) {
	t, err := c.Tree()
	if err != nil {
		return false, fmt.Errorf("tree of %s: %w", c.Hash, err)
	}
	if p != "" {
		if f, err := t.File(p); err == nil {
			s, err := f.Contents()
			return err == nil && strings.Contains(s, needle), err
		}
		if t, err = t.Tree(p); err != nil {
			return false, nil //nolint:nilerr // nothing there
		}
	}
	found := false
	err = t.Files().ForEach(func(f *object.File) error {
		s, err := f.Contents()
		if err != nil {
			return err
		}
		if strings.Contains(s, needle) {
			found = true
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return false, fmt.Errorf("files of %s: %w", c.Hash, err)
	}
	return found, nil
}

var errStop = errors.New("stop")
