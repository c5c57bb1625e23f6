// Package git reads the Git side of sluice's GitOps adapter: one branch of
// one repository, fetched incrementally with go-git, and the facts the
// adapter needs from it:
//
//   - which commits arrived on the branch after the commit being rolled out,
//     first-parent and merge-aware (CommitsSince);
//   - whether a commit reverts another, by git revert's message or by
//     comparing the changes of both commits (Reverts);
//   - the approvals, full promotions and rollbacks named in commit trailers
//     (ParseDirectives, Trailers);
//   - who signed a commit, checked against a keyring of OpenPGP public keys
//     and SSH allowed signers (Verify).
//
// A Reader keeps its copy of the branch in memory or in a cache directory.
// The first fetch is shallow (Options.Depth commits); later fetches bring
// only what is new. When a question needs older history (a commit below the
// shallow boundary, the parent of a commit whose changes are compared), the
// Reader deepens the copy step by step, up to the full history.
//
// Errors wrap the package's sentinel errors (ErrAuthentication,
// ErrCommitNotFound, ...) with %w and name the URL, branch and commit they
// concern. Credentials never appear in them.
//
// The trailer format and the revert rules are described for users in
// docs/gitops-git.md.
package git
