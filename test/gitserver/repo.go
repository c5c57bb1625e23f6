package gitserver

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// epoch dates the first commit a Repo writes (2026-01-01T10:00:00Z); each
// later one is a minute later, so committer dates always increase.
const epoch = 1767261600

// Repo is a bare repository on the server, written with go-git.
type Repo struct {
	name string
	dir  string
	url  string
	repo *gogit.Repository

	mu      sync.Mutex
	commits int
}

// CreateRepo creates the empty bare repository name (e.g. "app.git"),
// whose HEAD is branch.
func (s *Server) CreateRepo(name, branch string) (*Repo, error) {
	dir, err := s.repoDir(name)
	if err != nil {
		return nil, err
	}
	r, err := gogit.PlainInitWithOptions(dir, &gogit.PlainInitOptions{
		Bare:        true,
		InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)},
	})
	if err != nil {
		return nil, fmt.Errorf("create repository %s: %w", name, err)
	}
	return &Repo{name: name, dir: dir, url: s.URL(name), repo: r}, nil
}

// Dir is the repository's directory (a bare repository).
func (r *Repo) Dir() string { return r.dir }

// URL is the repository's HTTP(S) URL.
func (r *Repo) URL() string { return r.url }

// Change is one commit to write.
type Change struct {
	// Message of the commit; a final newline is added when missing.
	Message string
	// Files to write: path (with '/' between directories) -> content.
	Files map[string]string
	// Delete lists paths to remove.
	Delete []string
	// Author and Committer default to TestAuthor at the repository's
	// clock; a zero When is set to the clock.
	Author, Committer *object.Signature
	// Signer signs the commit (OpenPGPSigner, SSHSigner); nil leaves it
	// unsigned.
	Signer gogit.Signer
}

// TestAuthor is the author of commits that name none.
func TestAuthor() object.Signature {
	return object.Signature{Name: "Test Author", Email: "author@example.com"}
}

// Commit writes c on top of branch (creating the branch with a root commit
// when it does not exist) and returns the new commit's SHA.
func (r *Repo) Commit(branch string, c Change) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parents []plumbing.Hash
	tree := plumbing.ZeroHash
	if head, err := r.head(branch); err == nil {
		parents = []plumbing.Hash{head.Hash}
		tree = head.TreeHash
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", err
	}
	fs, err := flatten(r.repo.Storer, tree)
	if err != nil {
		return "", err
	}
	for path, content := range c.Files {
		h, err := writeBlob(r.repo.Storer, content)
		if err != nil {
			return "", err
		}
		fs[path] = entry{Mode: filemode.Regular, Hash: h}
	}
	for _, path := range c.Delete {
		if _, ok := fs[path]; !ok {
			return "", fmt.Errorf("delete %s: no such file on %s", path, branch)
		}
		delete(fs, path)
	}
	root, err := writeTree(r.repo.Storer, fs)
	if err != nil {
		return "", err
	}
	sha, err := r.writeCommit(root, parents, c.Message, c.Author, c.Committer, c.Signer)
	if err != nil {
		return "", err
	}
	return sha.String(), r.setBranch(branch, sha)
}

// Branch creates or moves branch to the commit at.
func (r *Repo) Branch(branch, at string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := object.GetCommit(r.repo.Storer, plumbing.NewHash(at)); err != nil {
		return fmt.Errorf("branch %s at %s: %w", branch, at, err)
	}
	return r.setBranch(branch, plumbing.NewHash(at))
}

// Head returns the SHA of branch's head.
func (r *Repo) Head(branch string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.head(branch)
	if err != nil {
		return "", err
	}
	return c.Hash.String(), nil
}

// CommitObject reads a commit.
func (r *Repo) CommitObject(sha string) (*object.Commit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return object.GetCommit(r.repo.Storer, plumbing.NewHash(sha))
}

// ReplaceTip rewrites the head commit of branch: edit changes a copy of it
// (its signature is kept unless edit changes it), which replaces it as the
// branch head. It forges commits: a signed commit whose message or tree
// edit changes no longer verifies.
func (r *Repo) ReplaceTip(branch string, edit func(*object.Commit)) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.head(branch)
	if err != nil {
		return "", err
	}
	c := *head
	c.ParentHashes = append([]plumbing.Hash(nil), head.ParentHashes...)
	edit(&c)
	o := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return "", err
	}
	h, err := r.repo.Storer.SetEncodedObject(o)
	if err != nil {
		return "", err
	}
	return h.String(), r.setBranch(branch, h)
}

func (r *Repo) head(branch string) (*object.Commit, error) {
	ref, err := r.repo.Storer.Reference(plumbing.NewBranchReferenceName(branch))
	if err != nil {
		return nil, fmt.Errorf("branch %s: %w", branch, err)
	}
	return object.GetCommit(r.repo.Storer, ref.Hash())
}

func (r *Repo) setBranch(branch string, h plumbing.Hash) error {
	return r.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), h))
}

// clock returns the date of the next commit.
func (r *Repo) clock() time.Time {
	t := time.Unix(epoch+int64(r.commits)*60, 0).UTC()
	r.commits++
	return t
}

// writeCommit stores a commit object, signed when signer is set.
func (r *Repo) writeCommit(tree plumbing.Hash, parents []plumbing.Hash, message string,
	author, committer *object.Signature, signer gogit.Signer) (plumbing.Hash, error) {
	when := r.clock()
	a := TestAuthor()
	if author != nil {
		a = *author
	}
	if a.When.IsZero() {
		a.When = when
	}
	cm := a
	if committer != nil {
		cm = *committer
		if cm.When.IsZero() {
			cm.When = when
		}
	}
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	c := &object.Commit{Author: a, Committer: cm, Message: message, TreeHash: tree, ParentHashes: parents}
	if signer != nil {
		payload := &plumbing.MemoryObject{}
		if err := c.EncodeWithoutSignature(payload); err != nil {
			return plumbing.ZeroHash, err
		}
		rd, err := payload.Reader()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		sig, err := signer.Sign(rd)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("sign commit: %w", err)
		}
		c.PGPSignature = string(sig)
	}
	o := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.repo.Storer.SetEncodedObject(o)
}
