package git

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// RevertRule names the rule by which a commit was found to revert another.
type RevertRule string

// The revert rules, tried in this order.
const (
	// RevertByMessage: the message has the line git revert writes,
	// "This reverts commit <full sha>." (or ", reversing" for a merge).
	RevertByMessage RevertRule = "Message"
	// RevertByChanges: the commit's changes against its first parent are
	// the exact inverse of the target's changes against its first parent,
	// on the same paths. This finds reverts whose message was edited and
	// reverts squashed into one commit, or merged in by a merge commit.
	RevertByChanges RevertRule = "Changes"
)

// RevertMatch is the answer of Reader.Reverts.
type RevertMatch struct {
	// Reverts is true when the commit reverts the target.
	Reverts bool
	// Rule is the rule that matched; empty when Reverts is false.
	Rule RevertRule
}

// revertPrefix starts the line git revert writes into the message.
const revertPrefix = "This reverts commit "

// RevertedCommits returns the SHAs that a commit message says it reverts:
// every line that starts (after blanks) with "This reverts commit " and a
// full SHA, followed by ".", "," or the end of the line, as git revert
// writes it. A SHA mentioned anywhere else does not count. SHAs are
// returned in lower case, in order, without repeats.
func RevertedCommits(message string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(message, "\n") {
		line = strings.TrimRight(strings.TrimLeft(line, " \t"), "\r")
		rest, ok := strings.CutPrefix(line, revertPrefix)
		if !ok || len(rest) < shaHexLen {
			continue
		}
		sha, tail := rest[:shaHexLen], rest[shaHexLen:]
		if !isFullSHA(sha) {
			continue
		}
		if tail != "" && tail[0] != '.' && tail[0] != ',' {
			continue
		}
		sha = strings.ToLower(sha)
		if !seen[sha] {
			seen[sha] = true
			out = append(out, sha)
		}
	}
	return out
}

// Reverts implements Reader.
func (r *branchReader) Reverts(ctx context.Context, revert, target string) (RevertMatch, error) {
	rh, err := parseSHA(revert)
	if err != nil {
		return RevertMatch{}, fmt.Errorf("revert check on %s: %w", r.where(), err)
	}
	th, err := parseSHA(target)
	if err != nil {
		return RevertMatch{}, fmt.Errorf("revert check on %s: %w", r.where(), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.headCommit(); err != nil {
		return RevertMatch{}, err
	}
	rc, err := r.commitObject(ctx, rh)
	if err != nil {
		return RevertMatch{}, fmt.Errorf("does %s revert %s: %w", rh, th, err)
	}
	tc, err := r.commitObject(ctx, th)
	if err != nil {
		return RevertMatch{}, fmt.Errorf("does %s revert %s: %w", rh, th, err)
	}
	for _, s := range RevertedCommits(rc.Message) {
		if s == th.String() {
			return RevertMatch{Reverts: true, Rule: RevertByMessage}, nil
		}
	}
	if len(rc.ParentHashes) == 0 {
		return RevertMatch{}, nil // a root commit reverts nothing
	}
	targetChanges, err := r.changes(ctx, tc)
	if err != nil {
		return RevertMatch{}, fmt.Errorf("does %s revert %s: %w", rh, th, err)
	}
	revertChanges, err := r.changes(ctx, rc)
	if err != nil {
		return RevertMatch{}, fmt.Errorf("does %s revert %s: %w", rh, th, err)
	}
	if invertsChanges(targetChanges, revertChanges) {
		return RevertMatch{Reverts: true, Rule: RevertByChanges}, nil
	}
	return RevertMatch{}, nil
}

// fileState is a path's mode and blob in a tree; the zero value is a path
// that does not exist.
type fileState struct {
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// fileChange is what one commit did to one path.
type fileChange struct {
	Path     string
	From, To fileState
}

// changes lists what c changed against its first parent (against an empty
// tree for a root commit), without rename detection.
func (r *branchReader) changes(ctx context.Context, c *object.Commit) ([]fileChange, error) {
	to, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", c.Hash, err)
	}
	from := &object.Tree{}
	if len(c.ParentHashes) > 0 {
		parents, err := r.parentCommits(ctx, c)
		if err != nil {
			return nil, err
		}
		if from, err = parents[0].Tree(); err != nil {
			return nil, fmt.Errorf("tree of %s: %w", parents[0].Hash, err)
		}
	}
	diff, err := object.DiffTreeWithOptions(ctx, from, to, nil)
	if err != nil {
		return nil, fmt.Errorf("compare %s with its parent: %w", c.Hash, err)
	}
	out := make([]fileChange, 0, len(diff))
	for _, d := range diff {
		fc := fileChange{Path: d.To.Name}
		if fc.Path == "" {
			fc.Path = d.From.Name
		}
		if d.From.Name != "" {
			fc.From = fileState{Mode: d.From.TreeEntry.Mode, Hash: d.From.TreeEntry.Hash}
		}
		if d.To.Name != "" {
			fc.To = fileState{Mode: d.To.TreeEntry.Mode, Hash: d.To.TreeEntry.Hash}
		}
		out = append(out, fc)
	}
	return out, nil
}

// invertsChanges reports whether revert undoes target exactly: it changes
// the same paths, each from the state target left it in back to the state
// target found it in. A target that changed nothing is reverted by nothing.
func invertsChanges(target, revert []fileChange) bool {
	if len(target) == 0 || len(target) != len(revert) {
		return false
	}
	byPath := make(map[string]fileChange, len(target))
	for _, t := range target {
		byPath[t.Path] = t
	}
	if len(byPath) != len(target) {
		return false
	}
	for _, rv := range revert {
		t, ok := byPath[rv.Path]
		if !ok || rv.From != t.To || rv.To != t.From {
			return false
		}
		delete(byPath, rv.Path)
	}
	return len(byPath) == 0
}
