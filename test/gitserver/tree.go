package gitserver

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// entry is a file in a flattened tree: its mode and blob.
type entry struct {
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// files is a tree flattened to path -> entry.
type files map[string]entry

// flatten lists the files of the tree h (none for the zero hash).
func flatten(s storer.EncodedObjectStorer, h plumbing.Hash) (files, error) {
	out := files{}
	if h.IsZero() {
		return out, nil
	}
	t, err := object.GetTree(s, h)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	walker := object.NewTreeWalker(t, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("tree %s: %w", h, err)
		}
		if e.Mode == filemode.Dir {
			continue
		}
		out[name] = entry{Mode: e.Mode, Hash: e.Hash}
	}
	return out, nil
}

// writeBlob stores content and returns its hash.
func writeBlob(s storer.EncodedObjectStorer, content string) (plumbing.Hash, error) {
	o := s.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	w, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write([]byte(content)); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(o)
}

// writeTree stores the trees of fs and returns the root tree's hash.
func writeTree(s storer.EncodedObjectStorer, fs files) (plumbing.Hash, error) {
	type dir struct {
		files   map[string]entry
		subdirs map[string]*dir
	}
	newDir := func() *dir { return &dir{files: map[string]entry{}, subdirs: map[string]*dir{}} }
	root := newDir()
	for path, e := range fs {
		d := root
		parts := strings.Split(path, "/")
		for _, p := range parts[:len(parts)-1] {
			if d.subdirs[p] == nil {
				d.subdirs[p] = newDir()
			}
			d = d.subdirs[p]
		}
		d.files[parts[len(parts)-1]] = e
	}
	var write func(d *dir) (plumbing.Hash, error)
	write = func(d *dir) (plumbing.Hash, error) {
		t := &object.Tree{}
		for name, e := range d.files {
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: e.Mode, Hash: e.Hash})
		}
		for name, sub := range d.subdirs {
			h, err := write(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// Git orders entries by name, a directory's name as if it ended
		// with '/'.
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
		o := s.NewEncodedObject()
		if err := t.Encode(o); err != nil {
			return plumbing.ZeroHash, err
		}
		return s.SetEncodedObject(o)
	}
	return write(root)
}

// diff lists the paths whose entry differs between a and b, sorted.
func diff(a, b files) []string {
	var out []string
	for p, e := range a {
		if f, ok := b[p]; !ok || f != e {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
