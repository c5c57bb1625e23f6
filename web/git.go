package web

import (
	"net/url"
	"strings"
)

// The annotations the page reads the Git commit and pull request of a
// release from: the hook for the GitOps adapter and for CI. Each is read
// from the workload first, then from the Rollout (which wins). The page only
// reads them; nothing here writes them.
const (
	// RevisionAnnotation names the commit of the workload's manifest as Flux
	// and Argo CD write revisions ("main@sha1:<sha>", "<sha>").
	RevisionAnnotation = "sluice.dev/revision"
	// CommitURLAnnotation is a link to the commit (http or https).
	CommitURLAnnotation = "sluice.dev/commit-url"
	// PullRequestAnnotation names the pull request of the release ("42",
	// "#42", "org/repo#42").
	PullRequestAnnotation = "sluice.dev/pull-request"
	// PullRequestURLAnnotation is a link to the pull request (http or https).
	PullRequestURLAnnotation = "sluice.dev/pull-request-url"
)

// Git is the commit and pull request of a release, as annotations name
// them.
type Git struct {
	// Revision is the revision annotation as written.
	Revision string `json:"revision,omitempty"`
	// Ref and Commit are its parts: the branch or tag, and the SHA.
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	// CommitURL links to the commit; empty unless http(s).
	CommitURL string `json:"commitURL,omitempty"`
	// PullRequest names the pull request.
	PullRequest string `json:"pullRequest,omitempty"`
	// PullRequestURL links to it; empty unless http(s).
	PullRequestURL string `json:"pullRequestURL,omitempty"`
}

// gitOf reads the Git annotations of the workload, then of the Rollout.
func gitOf(workloadAnn, rolloutAnn map[string]string) Git {
	get := func(key string) string {
		if v := strings.TrimSpace(rolloutAnn[key]); v != "" {
			return v
		}
		return strings.TrimSpace(workloadAnn[key])
	}
	g := Git{Revision: get(RevisionAnnotation), CommitURL: webURL(get(CommitURLAnnotation)),
		PullRequest: get(PullRequestAnnotation), PullRequestURL: webURL(get(PullRequestURLAnnotation))}
	g.Ref, g.Commit = splitRevision(g.Revision)
	return g
}

// splitRevision splits "main@sha1:<sha>", "main/<sha>", "sha256:<sha>" or a
// bare SHA into its ref and SHA. A value that names no hex SHA gives no
// commit.
func splitRevision(v string) (ref, sha string) {
	rest := v
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		ref, rest = rest[:i], rest[i+1:]
	}
	switch {
	case strings.HasPrefix(rest, "sha1:"), strings.HasPrefix(rest, "sha256:"):
		_, rest, _ = strings.Cut(rest, ":")
	case ref == "":
		if i := strings.LastIndex(rest, "/"); i >= 0 {
			ref, rest = rest[:i], rest[i+1:]
		}
	}
	if !isHex(rest) || (len(rest) != 40 && len(rest) != 64) {
		return "", ""
	}
	return ref, strings.ToLower(rest)
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return s != ""
}

// webURL returns v when it is an absolute http or https URL, else "".
func webURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}
