package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Reader reads one branch of one Git repository. Every method but Fetch
// works on the copy the last Fetch brought, reaching out to the server only
// to deepen a shallow copy. A Reader is safe for concurrent use.
type Reader interface {
	// Fetch brings the copy of the branch up to date and returns the
	// branch head. The first call fetches Options.Depth commits; later
	// calls fetch only the objects that are new.
	Fetch(ctx context.Context) (Commit, error)
	// Commit reads one commit of the branch's history.
	Commit(ctx context.Context, sha string) (Commit, error)
	// CommitsSince lists the commits that arrived on the branch after the
	// commit sha, which must be an ancestor of the head: the commits
	// reachable from the head and not from sha, oldest first. Commits
	// merged in from a side branch come just before the merge commit that
	// brought them, each with Via naming that merge.
	CommitsSince(ctx context.Context, sha string) ([]Arrival, error)
	// Reverts reports whether the commit revert reverts the commit target,
	// and by which rule (see RevertRule).
	Reverts(ctx context.Context, revert, target string) (RevertMatch, error)
	// Verify checks the signature of a commit against keys and returns
	// who signed it.
	Verify(ctx context.Context, sha string, keys *Keyring) (Signer, error)
	// Touches reports whether the commit sha changed anything at or under
	// one of paths (directories or files of the repository, as CleanPath
	// reads them; none means the whole tree) against its first parent. A
	// root commit touches every path it has.
	Touches(ctx context.Context, sha string, paths []string) (bool, error)
	// Introduced finds the commit of the branch's history that brought
	// needle into the files at or under dir: from the head back, the
	// commit whose files hold needle while its parents' do not, following
	// the parent that holds it through merges (so a value added on a pull
	// request's branch is found in the commit that added it, with Via the
	// merge that brought it). It returns an error wrapping
	// ErrCommitNotFound when the head does not hold needle.
	Introduced(ctx context.Context, dir, needle string) (Arrival, error)
	// File reads the file at path p (as CleanPath reads it) in the commit
	// sha, at most 1 MiB of it. It returns an error wrapping
	// ErrFileNotFound when there is none.
	File(ctx context.Context, sha, p string) ([]byte, error)
	// Brought lists the commits the commit sha brought to the branch: sha
	// alone when it is not a merge; for a merge, sha and every commit it
	// reaches that its first parent does not (the merged branch's commits),
	// oldest first, at most 250.
	Brought(ctx context.Context, sha string) ([]Commit, error)
}

// DefaultDepth is how many commits the first fetch brings when
// Options.Depth is zero.
const DefaultDepth = 50

// Options configure a Reader.
type Options struct {
	// URL of the repository: https://host/owner/repo.git,
	// ssh://git@host/owner/repo.git or git@host:owner/repo.git. It must not
	// carry a password; credentials go in Auth.
	URL string
	// Branch to read, without refs/heads/.
	Branch string
	// Auth holds the credentials for URL's scheme; empty for an anonymous
	// HTTPS repository.
	Auth Auth
	// CABundle holds PEM certificates to trust for HTTPS besides the
	// system's.
	CABundle []byte
	// AllowInsecureHTTP allows http:// URLs. Over plain HTTP anyone on the
	// way can read the credentials and change the commits (and so forge
	// approvals), so it is meant for tests.
	AllowInsecureHTTP bool
	// CacheDir keeps the copy of the branch on disk, in a subdirectory
	// named after URL and Branch, so a restart fetches only what is new.
	// Empty keeps it in memory. Two Readers must not share a URL and
	// branch in one CacheDir at the same time.
	CacheDir string
	// Depth is how many commits the first fetch brings: 0 means
	// DefaultDepth, a negative number the whole history.
	Depth int
}

// infiniteDepth asks the server for the whole history (git's "deepen
// 2147483647", what git fetch --unshallow sends).
const infiniteDepth = 1<<31 - 1

// maxStepDepth is the deepest a step-wise deepening goes before asking for
// the whole history.
const maxStepDepth = 1 << 14

// Ref names in the local copy: the branch as last fetched, and a scratch
// ref that deepening fetches into, so deepening never moves the head the
// other methods read.
const (
	remoteName = "origin"
	refPrefix  = "refs/remotes/" + remoteName + "/"
	deepenRef  = "refs/sluice/deepen"
)

// branchReader implements Reader with go-git.
type branchReader struct {
	branch   string
	endpoint endpoint
	caBundle []byte
	redact   redactor

	mu     sync.Mutex
	st     storage.Storer
	remote *gogit.Remote
	// depth is the depth asked for by the last fetch that set one.
	depth int
	// complete is set once the whole history has been asked for.
	complete bool
}

var _ Reader = (*branchReader)(nil)

// New returns a Reader for opts.URL and opts.Branch. It checks the options
// and opens the cache directory; it does not contact the server.
func New(opts Options) (Reader, error) {
	if opts.Branch == "" {
		return nil, fmt.Errorf("%w: no branch", ErrInvalidOptions)
	}
	if err := plumbing.NewBranchReferenceName(opts.Branch).Validate(); err != nil {
		return nil, fmt.Errorf("%w: branch name %q: %w", ErrInvalidOptions, opts.Branch, err)
	}
	ep, err := newEndpoint(opts.URL, opts.Auth, opts.AllowInsecureHTTP)
	if err != nil {
		return nil, err
	}
	st, err := openStorage(opts.CacheDir, ep.display, opts.Branch)
	if err != nil {
		return nil, err
	}
	depth := opts.Depth
	if depth == 0 {
		depth = DefaultDepth
	}
	r := &branchReader{
		branch:   opts.Branch,
		endpoint: ep,
		caBundle: opts.CABundle,
		redact:   redactor{secrets: opts.Auth.secrets()},
		st:       st,
		remote:   gogit.NewRemote(st, &config.RemoteConfig{Name: remoteName, URLs: []string{opts.URL}}),
		depth:    depth,
		complete: depth < 0,
	}
	return r, nil
}

// openStorage opens the object store: in memory, or a bare repository in a
// subdirectory of cacheDir keyed by URL and branch.
func openStorage(cacheDir, url, branch string) (storage.Storer, error) {
	if cacheDir == "" {
		return memory.NewStorage(), nil
	}
	sum := sha256.Sum256([]byte(url + "\x00" + branch))
	dir := filepath.Join(cacheDir, hex.EncodeToString(sum[:12]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache directory for %s: %w", url, err)
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	if _, err := gogit.Init(st, nil); err != nil && !errors.Is(err, gogit.ErrRepositoryAlreadyExists) {
		return nil, fmt.Errorf("cache directory %s for %s: %w", dir, url, err)
	}
	return st, nil
}

// where names the branch and repository in errors.
func (r *branchReader) where() string {
	return fmt.Sprintf("branch %q of %s", r.branch, r.endpoint.display)
}

// trackingRef is where the fetched branch head is kept.
func (r *branchReader) trackingRef() plumbing.ReferenceName {
	return plumbing.ReferenceName(refPrefix + r.branch)
}

// Fetch implements Reader.
func (r *branchReader) Fetch(ctx context.Context) (Commit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	depth := 0 // only what is new
	if _, err := r.st.Reference(r.trackingRef()); err != nil {
		depth = r.depth
		if r.complete {
			depth = 0
		}
	}
	if err := r.fetch(ctx, r.trackingRef(), depth); err != nil {
		return Commit{}, err
	}
	head, err := r.headCommit()
	if err != nil {
		return Commit{}, err
	}
	return fromObject(head), nil
}

// fetch fetches the branch into ref, with a depth when depth > 0.
func (r *branchReader) fetch(ctx context.Context, ref plumbing.ReferenceName, depth int) error {
	spec := config.RefSpec("+" + plumbing.NewBranchReferenceName(r.branch).String() + ":" + ref.String())
	err := r.remote.FetchContext(ctx, &gogit.FetchOptions{
		RemoteName: remoteName,
		RefSpecs:   []config.RefSpec{spec},
		Depth:      depth,
		Auth:       r.endpoint.auth,
		Tags:       gogit.NoTags,
		CABundle:   r.caBundle,
	})
	if err == nil || errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return nil
	}
	return fmt.Errorf("fetch %s: %w", r.where(), r.classify(err))
}

// classify wraps a transport error with the package's sentinel for it and
// strips secrets from its message.
func (r *branchReader) classify(err error) error {
	clean := r.redact.clean(err)
	msg := err.Error()
	var noRef gogit.NoMatchingRefSpecError
	switch {
	case errors.Is(err, ErrHostKey):
		if clean != err { // redacted: keep the sentinel
			return fmt.Errorf("%w: %w", ErrHostKey, clean)
		}
		return err
	case strings.Contains(msg, ErrHostKey.Error()):
		return fmt.Errorf("%w: %w", ErrHostKey, clean)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		strings.Contains(msg, "ssh: unable to authenticate"):
		return fmt.Errorf("%w: %w", ErrAuthentication, clean)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("%w: %w", ErrRepositoryNotFound, clean)
	case errors.As(err, &noRef), errors.Is(err, transport.ErrEmptyRemoteRepository):
		return fmt.Errorf("%w: %w", ErrBranchNotFound, clean)
	}
	return clean
}
