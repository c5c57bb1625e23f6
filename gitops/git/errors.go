package git

import (
	"context"
	"errors"
	"strings"
)

// Errors returned by a Reader, wrapped with the URL, branch and commit they
// concern. Test for them with errors.Is.
var (
	// ErrInvalidOptions is wrapped by New for options it cannot use.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrAuthentication is wrapped when the server refuses the credentials,
	// or asks for credentials and none were given.
	ErrAuthentication = errors.New("authentication failed")
	// ErrHostKey is wrapped when an SSH server's host key is not one of the
	// known hosts.
	ErrHostKey = errors.New("SSH host key not trusted")
	// ErrRepositoryNotFound is wrapped when the server has no repository at
	// the URL (some servers answer so to missing credentials too).
	ErrRepositoryNotFound = errors.New("repository not found")
	// ErrBranchNotFound is wrapped when the repository has no such branch.
	ErrBranchNotFound = errors.New("branch not found")
	// ErrNotFetched is wrapped when the branch is read before the first
	// successful Fetch.
	ErrNotFetched = errors.New("branch not fetched yet")
	// ErrInvalidSHA is wrapped when a commit is named by anything but its
	// full hexadecimal SHA-1.
	ErrInvalidSHA = errors.New("not a full commit SHA")
	// ErrCommitNotFound is wrapped when a commit is not in the history of
	// the branch, even after fetching all of it.
	ErrCommitNotFound = errors.New("commit not found in the branch's history")
	// ErrNotAncestor is wrapped when a commit is not an ancestor of the
	// branch head (the branch was rewritten, or the commit is on another
	// branch).
	ErrNotAncestor = errors.New("commit is not an ancestor of the branch head")
	// ErrUnsigned is wrapped when a commit carries no signature.
	ErrUnsigned = errors.New("commit is not signed")
	// ErrUnknownKey is wrapped when a commit is signed by a key that is not
	// in the keyring.
	ErrUnknownKey = errors.New("commit is signed by a key not in the keyring")
	// ErrBadSignature is wrapped when a signature does not verify: the
	// commit was changed after signing, the key expired or was revoked, or
	// the signature is malformed or of an unsupported kind.
	ErrBadSignature = errors.New("commit signature is not valid")
)

// redactor removes secrets from error messages. Errors from go-git and the
// transports may quote what the server answered; a secret echoed there must
// not reach logs, events or status.
type redactor struct {
	secrets []string
}

// redactedError is an error whose message had secrets removed. It does not
// unwrap to the original, which still holds them.
type redactedError struct {
	msg   string
	kinds []error
}

func (e *redactedError) Error() string { return e.msg }

// Is keeps the classification of the original error (context cancelled,
// deadline exceeded) without exposing its message.
func (e *redactedError) Is(target error) bool {
	for _, k := range e.kinds {
		if k == target {
			return true
		}
	}
	return false
}

// clean returns err with every secret replaced by "<redacted>". An error
// that holds no secret is returned as it is.
func (r redactor) clean(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, s := range r.secrets {
		if s != "" && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
			changed = true
		}
	}
	if !changed {
		return err
	}
	out := &redactedError{msg: msg}
	for _, k := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, k) {
			out.kinds = append(out.kinds, k)
		}
	}
	return out
}
