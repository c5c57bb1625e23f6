package gitlabfake

import (
	"crypto/sha1" // Git object names are SHA-1, not a security use
	"encoding/hex"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"
)

// sig is who made a commit and when.
type sig struct {
	name, email string
	when        time.Time
}

func signature(u *user, when time.Time) sig {
	return sig{name: u.name, email: u.email, when: when}
}

// commit is a commit: its files by path (content), parents, message and author.
type commit struct {
	sha     string
	parents []string
	files   map[string]string
	message string
	author  sig
}

// title is the commit's first line.
func (c *commit) title() string {
	first, _, _ := strings.Cut(c.message, "\n")
	return strings.TrimSpace(first)
}

// repository is a project's Git repository: commits and branches.
type repository struct {
	defaultBranch string
	commits       map[string]*commit
	branches      map[string]string // name -> head commit
	seq           int
}

func newRepository(defaultBranch string) *repository {
	return &repository{defaultBranch: defaultBranch, commits: map[string]*commit{}, branches: map[string]string{}}
}

// add stores a new commit and returns its name (a SHA-1 of its content and a sequence number,
// so that equal contents at different times differ).
func (r *repository) add(parents []string, files map[string]string, message string, author sig) string {
	r.seq++
	h := sha1.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00", r.seq, strings.Join(parents, ","), message, author.when)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%s\x00", p, files[p])
	}
	sha := hex.EncodeToString(h.Sum(nil))
	r.commits[sha] = &commit{sha: sha, parents: parents, files: files, message: message, author: author}
	return sha
}

// commit writes a commit on branch (created if missing) with the files of its head, set laid
// over them and the paths in remove deleted, and moves the branch to it.
func (r *repository) commit(branch string, base *string, set map[string]string, remove []string, message string, author sig) string {
	var parents []string
	files := map[string]string{}
	head, ok := r.branches[branch]
	if base != nil {
		head, ok = *base, true
	}
	if ok {
		parents = []string{head}
		maps.Copy(files, r.commits[head].files)
	}
	maps.Copy(files, set)
	for _, p := range remove {
		delete(files, p)
	}
	sha := r.add(parents, files, message, author)
	r.branches[branch] = sha
	return sha
}

// ancestors is the set of commits reachable from sha, sha included.
func (r *repository) ancestors(sha string) map[string]bool {
	out := map[string]bool{}
	stack := []string{sha}
	for len(stack) > 0 {
		at := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if out[at] || r.commits[at] == nil {
			continue
		}
		out[at] = true
		stack = append(stack, r.commits[at].parents...)
	}
	return out
}

// branchesContaining lists the branches whose head reaches sha, sorted.
func (r *repository) branchesContaining(sha string) []string {
	var out []string
	for name, head := range r.branches {
		if r.ancestors(head)[sha] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// onlyIn lists the commits reachable from head but not from base, newest first by sequence of
// discovery.
func (r *repository) onlyIn(head, base string) []string {
	exclude := r.ancestors(base)
	var out []string
	for sha := range r.ancestors(head) {
		if !exclude[sha] {
			out = append(out, sha)
		}
	}
	sort.Strings(out)
	return out
}

// mergedFiles lays the changes source made since the merge base (paths where it differs from
// base's head at the time the branches forked, approximated by any ancestor of target) over
// target's files. A path both changed differently is a conflict.
func (r *repository) mergedFiles(target, source string) (map[string]string, error) {
	targetAnc := r.ancestors(target)
	// The merge base: the newest common ancestor reached walking source's first parents.
	base := ""
	for at := source; at != ""; {
		if targetAnc[at] {
			base = at
			break
		}
		c := r.commits[at]
		if c == nil || len(c.parents) == 0 {
			break
		}
		at = c.parents[0]
	}
	out := maps.Clone(r.commits[target].files)
	var baseFiles map[string]string
	if base != "" {
		baseFiles = r.commits[base].files
	}
	src := r.commits[source].files
	for _, p := range unionPaths(baseFiles, src) {
		b, inBase := baseFiles[p]
		v, inSrc := src[p]
		if inBase == inSrc && b == v {
			continue // source did not change p
		}
		t, inTarget := out[p]
		if inTarget != inBase || t != b {
			if inTarget == inSrc && t == v {
				continue
			}
			return nil, fmt.Errorf("merge conflict on %s", p)
		}
		if inSrc {
			out[p] = v
		} else {
			delete(out, p)
		}
	}
	return out, nil
}

func unionPaths(a, b map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{a, b} {
		for p := range m {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// revert undoes target's changes against its first parent on top of branch's head, as Gitaly's
// UserRevert does (a merge commit is reverted against its mainline, the first parent). code is
// GitLab's error_code when it cannot: "conflict" (a path changed again since) or "empty" (the
// changes are already undone).
func (r *repository) revert(target, branch string, author sig) (sha, code string) {
	t := r.commits[target]
	head := r.branches[branch]
	var parent map[string]string
	if len(t.parents) > 0 {
		parent = r.commits[t.parents[0]].files
	}
	files := maps.Clone(r.commits[head].files)
	changed := false
	for _, p := range unionPaths(parent, t.files) {
		want, inParent := parent[p]
		was, inTarget := t.files[p]
		if inParent == inTarget && want == was {
			continue
		}
		now, inHead := files[p]
		switch {
		case inHead == inParent && now == want:
			continue // already as before
		case inHead != inTarget || now != was:
			return "", "conflict"
		}
		changed = true
		if inParent {
			files[p] = want
		} else {
			delete(files, p)
		}
	}
	if !changed {
		return "", "empty"
	}
	message := fmt.Sprintf("Revert %q\n\nThis reverts commit %s", t.title(), t.sha)
	if len(t.parents) > 1 {
		message += fmt.Sprintf(", reversing\nchanges made to %s", t.parents[0])
	}
	sha = r.add([]string{head}, files, message+".\n", author)
	r.branches[branch] = sha
	return sha, ""
}
