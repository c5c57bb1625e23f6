package gitea

import (
	"fmt"
	"sort"

	sdk "code.gitea.io/sdk/gitea"
)

// Modes of the tree entries Gitea's file API can write: a regular and an executable file. It
// cannot write a symbolic link (120000) or a submodule (160000), nor change a file's mode.
const (
	modeFile       = "100644"
	modeExecutable = "100755"
)

// entry is a file, symbolic link or submodule of a tree, by its full path.
type entry struct {
	SHA  string
	Mode string
}

// fileOp is one operation of Gitea's POST /repos/{owner}/{repo}/contents.
type fileOp struct {
	// Path is the file's path.
	Path string
	// Operation is "create", "update" or "delete".
	Operation string
	// Blob is the blob to write (create and update).
	Blob string
	// Current is the blob the path holds now on the base (update and delete): Gitea refuses the
	// operation when the path has changed since, which makes the plan's read a precondition.
	Current string
}

// flatTree indexes a recursive tree listing by path, leaving out the directories.
func flatTree(entries []sdk.GitEntry, into map[string]entry) {
	for _, e := range entries {
		if e.Type == "tree" {
			continue
		}
		into[e.Path] = entry{SHA: e.SHA, Mode: e.Mode}
	}
}

// planRevert undoes, on head, the changes the reverted commit made to its parent: every path
// that differs between reverted and parent goes back to the parent's version where head still
// has the reverted commit's version. A path head has changed since (to anything else than the
// parent's version) is a conflict. A change Gitea's file API cannot write (a symbolic link, a
// submodule, a mode change, an executable file to re-create) is an error. Paths come out sorted.
func planRevert(reverted, parent, head map[string]entry) (ops []fileOp, conflicts []string, err error) {
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
			continue // already as the parent had it
		case inHead != inReverted || now != was:
			conflicts = append(conflicts, path)
			continue
		}
		op, err := operation(path, now, inHead, want, inParent)
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, op)
	}
	return ops, conflicts, nil
}

// operation is the file operation that turns path from now (on head, if inHead) into want (the
// parent's, if inParent).
func operation(path string, now entry, inHead bool, want entry, inParent bool) (fileOp, error) {
	for _, e := range []struct {
		entry
		present bool
	}{{now, inHead}, {want, inParent}} {
		if e.present && e.Mode != modeFile && e.Mode != modeExecutable {
			return fileOp{}, fmt.Errorf("path %s is a symbolic link or submodule (mode %s), which Gitea's file API cannot revert", path, e.Mode)
		}
	}
	switch {
	case !inParent:
		return fileOp{Path: path, Operation: "delete", Current: now.SHA}, nil
	case !inHead:
		if want.Mode != modeFile {
			return fileOp{}, fmt.Errorf("path %s was an executable file, which Gitea's file API cannot re-create as one", path)
		}
		return fileOp{Path: path, Operation: "create", Blob: want.SHA}, nil
	case now.Mode != want.Mode:
		return fileOp{}, fmt.Errorf("path %s changed mode (%s to %s), which Gitea's file API cannot revert", path, want.Mode, now.Mode)
	}
	return fileOp{Path: path, Operation: "update", Blob: want.SHA, Current: now.SHA}, nil
}
