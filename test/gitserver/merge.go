package gitserver

import (
	"fmt"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// MergeOptions shape a merge.
type MergeOptions struct {
	// Message of the commit. The default is git's ("Merge branch 'x'",
	// "Merge branch 'x' into y" for a target other than main or master) or,
	// for a squash, "Squashed commit of branch 'x'".
	Message string
	// Squash writes one commit with the merged files and a single parent,
	// as a squash merge on a Git host does.
	Squash bool
	// Author of the commit; TestAuthor by default.
	Author *object.Signature
	// Signer signs the commit.
	Signer gogit.Signer
}

// Merge merges branch from into branch into with a merge commit (or a
// squash commit) and returns its SHA. Files are merged whole: a file
// changed on both sides since the merge base, differently, is a conflict
// and an error.
func (r *Repo) Merge(into, from string, o MergeOptions) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ours, err := r.head(into)
	if err != nil {
		return "", err
	}
	theirs, err := r.head(from)
	if err != nil {
		return "", err
	}
	bases, err := ours.MergeBase(theirs)
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", into, from, err)
	}
	if len(bases) > 0 && bases[0].Hash == theirs.Hash {
		return "", fmt.Errorf("merge %s into %s: nothing to merge", from, into)
	}
	baseTree := plumbing.ZeroHash
	if len(bases) > 0 {
		baseTree = bases[0].TreeHash
	}
	merged, err := r.mergeFiles(baseTree, ours.TreeHash, theirs.TreeHash)
	if err != nil {
		return "", fmt.Errorf("merge %s into %s: %w", from, into, err)
	}
	tree, err := writeTree(r.repo.Storer, merged)
	if err != nil {
		return "", err
	}
	msg := o.Message
	parents := []plumbing.Hash{ours.Hash, theirs.Hash}
	switch {
	case o.Squash:
		parents = parents[:1]
		if msg == "" {
			msg = fmt.Sprintf("Squashed commit of branch '%s'", from)
		}
	case msg == "" && (into == "main" || into == "master"):
		msg = fmt.Sprintf("Merge branch '%s'", from)
	case msg == "":
		msg = fmt.Sprintf("Merge branch '%s' into %s", from, into)
	}
	sha, err := r.writeCommit(tree, parents, msg, o.Author, nil, o.Signer)
	if err != nil {
		return "", err
	}
	return sha.String(), r.setBranch(into, sha)
}

// mergeFiles merges the files of two trees against their base tree.
func (r *Repo) mergeFiles(base, ours, theirs plumbing.Hash) (files, error) {
	b, err := flatten(r.repo.Storer, base)
	if err != nil {
		return nil, err
	}
	o, err := flatten(r.repo.Storer, ours)
	if err != nil {
		return nil, err
	}
	t, err := flatten(r.repo.Storer, theirs)
	if err != nil {
		return nil, err
	}
	out := files{}
	for p, e := range o {
		out[p] = e
	}
	for _, p := range diff(b, t) {
		be, inBase := b[p]
		oe, inOurs := o[p]
		te, inTheirs := t[p]
		switch {
		case inOurs == inBase && oe == be: // only theirs changed it
		case inOurs == inTheirs && oe == te: // both made the same change
			continue
		default:
			return nil, fmt.Errorf("conflict in %s", p)
		}
		if inTheirs {
			out[p] = te
		} else {
			delete(out, p)
		}
	}
	return out, nil
}

// RevertOptions shape a revert.
type RevertOptions struct {
	// Mainline is the parent (counted from 1) whose side a merge commit is
	// reverted to, as git revert -m; required for a merge commit.
	Mainline int
	// Message replaces the message git revert writes.
	Message string
	// Author of the commit; TestAuthor by default.
	Author *object.Signature
	// Signer signs the commit.
	Signer gogit.Signer
}

// Revert writes on branch a commit that undoes the commit sha, as git
// revert does, and returns its SHA. Its message is git's:
//
//	Revert "<subject>"
//
//	This reverts commit <sha>.
//
// (for a merge: "This reverts commit <sha>, reversing\nchanges made to
// <parent>."). A file changed since sha, so that git would stop with a
// conflict, is an error.
func (r *Repo) Revert(branch, sha string, o RevertOptions) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.head(branch)
	if err != nil {
		return "", err
	}
	target, err := object.GetCommit(r.repo.Storer, plumbing.NewHash(sha))
	if err != nil {
		return "", fmt.Errorf("revert %s: %w", sha, err)
	}
	parentTree := plumbing.ZeroHash
	var parent plumbing.Hash
	switch n := len(target.ParentHashes); {
	case n > 1 && (o.Mainline < 1 || o.Mainline > n):
		return "", fmt.Errorf("revert %s: it is a merge; give Mainline 1 to %d", sha, n)
	case n > 1:
		parent = target.ParentHashes[o.Mainline-1]
	case o.Mainline > 1:
		return "", fmt.Errorf("revert %s: Mainline %d for a commit with %d parents", sha, o.Mainline, n)
	case n == 1:
		parent = target.ParentHashes[0]
	}
	if !parent.IsZero() {
		pc, err := object.GetCommit(r.repo.Storer, parent)
		if err != nil {
			return "", err
		}
		parentTree = pc.TreeHash
	}
	before, err := flatten(r.repo.Storer, parentTree)
	if err != nil {
		return "", err
	}
	after, err := flatten(r.repo.Storer, target.TreeHash)
	if err != nil {
		return "", err
	}
	now, err := flatten(r.repo.Storer, head.TreeHash)
	if err != nil {
		return "", err
	}
	for _, p := range diff(before, after) {
		ae, inAfter := after[p]
		ne, inNow := now[p]
		if inAfter != inNow || ae != ne {
			return "", fmt.Errorf("revert %s: conflict in %s, changed since", sha, p)
		}
		if be, ok := before[p]; ok {
			now[p] = be
		} else {
			delete(now, p)
		}
	}
	tree, err := writeTree(r.repo.Storer, now)
	if err != nil {
		return "", err
	}
	msg := o.Message
	if msg == "" {
		msg = RevertMessage(target, parent)
	}
	h, err := r.writeCommit(tree, []plumbing.Hash{head.Hash}, msg, o.Author, nil, o.Signer)
	if err != nil {
		return "", err
	}
	return h.String(), r.setBranch(branch, h)
}

// RevertMessage is the message git revert (2.39) writes when it reverts
// target against parent (its mainline, for a merge).
func RevertMessage(target *object.Commit, parent plumbing.Hash) string {
	subject, _, _ := strings.Cut(strings.TrimLeft(target.Message, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "Revert \"%s\"\n\nThis reverts commit %s", subject, target.Hash)
	if len(target.ParentHashes) > 1 {
		fmt.Fprintf(&b, ", reversing\nchanges made to %s", parent)
	}
	b.WriteString(".\n")
	return b.String()
}
