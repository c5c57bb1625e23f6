package git

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrFileNotFound is wrapped by File when the commit has no file at the
// path.
var ErrFileNotFound = errors.New("file not found")

// maxFileSize bounds what File reads.
const maxFileSize = 1 << 20

// File implements Reader.
func (r *branchReader) File(ctx context.Context, sha, p string) ([]byte, error) {
	h, err := parseSHA(sha)
	if err != nil {
		return nil, fmt.Errorf("a file of %s: %w", r.where(), err)
	}
	p = CleanPath(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.headCommit(); err != nil {
		return nil, err
	}
	c, err := r.commitObject(ctx, h)
	if err != nil {
		return nil, err
	}
	f, err := c.File(p)
	switch {
	case errors.Is(err, object.ErrFileNotFound), errors.Is(err, object.ErrDirectoryNotFound), errors.Is(err, object.ErrEntryNotFound):
		return nil, fmt.Errorf("%s in %s: %w", p, sha, ErrFileNotFound)
	case err != nil:
		return nil, fmt.Errorf("%s in %s: %w", p, sha, err)
	}
	if f.Size > maxFileSize {
		return nil, fmt.Errorf("%s in %s is %d bytes, more than %d", p, sha, f.Size, maxFileSize)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("%s in %s: %w", p, sha, err)
	}
	defer func() { _ = rd.Close() }()
	return io.ReadAll(io.LimitReader(rd, maxFileSize))
}

// maxBrought bounds the commits Brought lists.
const maxBrought = 250

// Brought implements Reader.
func (r *branchReader) Brought(ctx context.Context, sha string) ([]Commit, error) {
	h, err := parseSHA(sha)
	if err != nil {
		return nil, fmt.Errorf("the commits %s brought: %w", r.where(), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, err := r.headCommit(); err != nil {
			return nil, err
		}
		c, err := r.commitObject(ctx, h)
		if err != nil {
			return nil, err
		}
		if len(c.ParentHashes) < 2 {
			return []Commit{fromObject(c)}, nil
		}
		if _, err := r.commitObject(ctx, c.ParentHashes[0]); err != nil {
			return nil, err
		}
		arrivals, err := r.arrivals(c, c.ParentHashes[0])
		if err == nil {
			out := make([]Commit, 0, min(len(arrivals), maxBrought))
			for _, a := range arrivals {
				if len(out) == maxBrought {
					break
				}
				out = append(out, a.Commit)
			}
			return out, nil
		}
		if !errors.Is(err, errShallow) {
			return nil, err
		}
		more, derr := r.deepen(ctx)
		if derr != nil {
			return nil, derr
		}
		if !more {
			return nil, fmt.Errorf("%s: %w", r.where(), err)
		}
	}
}
