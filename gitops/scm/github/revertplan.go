package github

import (
	"sort"

	gh "github.com/google/go-github/v56/github"
)

// treeEntry is a file (blob), symbolic link or submodule in a tree, by its full path.
type treeEntry struct {
	SHA  string
	Mode string
	Type string
}

// treeChange sets a path to Entry, or removes it when Entry is nil (Removed is what was there).
type treeChange struct {
	Path    string
	Entry   *treeEntry
	Removed *treeEntry
}

// flatTree indexes a recursive tree listing by path, leaving out the directories.
func flatTree(tree *gh.Tree) map[string]treeEntry {
	out := make(map[string]treeEntry, len(tree.Entries))
	for _, e := range tree.Entries {
		if e.GetType() == "tree" {
			continue
		}
		out[e.GetPath()] = treeEntry{SHA: e.GetSHA(), Mode: e.GetMode(), Type: e.GetType()}
	}
	return out
}

// planRevert undoes, on head, the changes the reverted commit made to its parent: every path
// that differs between reverted and parent goes back to the parent's version, where head still
// has the reverted commit's version. A path head has changed since (to anything else than the
// parent's version) is a conflict. Paths come out sorted.
func planRevert(reverted, parent, head map[string]treeEntry) (changes []treeChange, conflicts []string) {
	paths := map[string]bool{}
	for p := range reverted {
		paths[p] = true
	}
	for p := range parent {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	for _, path := range sorted {
		was, inReverted := reverted[path]
		want, inParent := parent[path]
		if inReverted == inParent && was == want {
			continue
		}
		now, inHead := head[path]
		switch {
		case inHead == inParent && now == want:
			// Already as the parent had it.
		case inHead == inReverted && now == was:
			ch := treeChange{Path: path}
			if inParent {
				w := want
				ch.Entry = &w
			} else {
				n := now
				ch.Removed = &n
			}
			changes = append(changes, ch)
		default:
			conflicts = append(conflicts, path)
		}
	}
	return changes, conflicts
}
