package githubfake

import (
	"crypto/sha1" // Git object names are SHA-1, not a security use
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// entry is a file in a tree: its blob (or submodule commit) and mode.
type entry struct {
	SHA  string
	Mode string
	Type string
}

// tree is a flat tree: every file by its full path. Directories are derived.
type tree map[string]entry

// commit is a Git commit.
type commit struct {
	SHA       string
	Tree      string
	Parents   []string
	Message   string
	Author    Signature
	Committer Signature
}

// Signature is who made a commit and when.
type Signature struct {
	// Name of the person.
	Name string
	// Email of the person.
	Email string
	// When the commit was made.
	When time.Time
}

// objectID returns the Git object name of content of a type.
func objectID(kind string, content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(content))
	_, _ = h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// treeID names a flat tree by its sorted entries (not Git's exact encoding, but stable and
// content-addressed, which is all the fake needs).
func treeID(t tree) string {
	return objectID("tree", []byte(t.listing("")))
}

// listing is the sorted "mode type sha path" lines of the entries under prefix.
func (t tree) listing(prefix string) string {
	var lines []string
	for p, e := range t {
		if strings.HasPrefix(p, prefix) {
			lines = append(lines, e.Mode+" "+e.Type+" "+e.SHA+" "+p)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// dirs returns every directory of the tree with the id of its subtree.
func (t tree) dirs() map[string]string {
	out := map[string]string{}
	for p := range t {
		for i := strings.Index(p, "/"); i >= 0; {
			dir := p[:i]
			if _, ok := out[dir]; !ok {
				out[dir] = objectID("tree", []byte(t.listing(dir+"/")))
			}
			next := strings.Index(p[i+1:], "/")
			if next < 0 {
				break
			}
			i += next + 1
		}
	}
	return out
}

// commitID names a commit by its content.
func commitID(c *commit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", c.Tree)
	for _, p := range c.Parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author %s <%s> %d\ncommitter %s <%s> %d\n\n%s",
		c.Author.Name, c.Author.Email, c.Author.When.Unix(),
		c.Committer.Name, c.Committer.Email, c.Committer.When.Unix(), c.Message)
	return objectID("commit", []byte(b.String()))
}

// changes returns what turned tree a into tree b: the paths set (to b's entry) or removed.
func changes(a, b tree) (set map[string]entry, removed []string) {
	set = map[string]entry{}
	for p, e := range b {
		if old, ok := a[p]; !ok || old != e {
			set[p] = e
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			removed = append(removed, p)
		}
	}
	sort.Strings(removed)
	return set, removed
}

// apply returns a copy of t with the changes applied.
func (t tree) apply(set map[string]entry, removed []string) tree {
	out := make(tree, len(t)+len(set))
	for p, e := range t {
		out[p] = e
	}
	for _, p := range removed {
		delete(out, p)
	}
	for p, e := range set {
		out[p] = e
	}
	return out
}
