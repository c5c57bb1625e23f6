package scm

import (
	"fmt"
	"sort"
	"strings"
)

// Client is every capability sluice's GitOps adapter uses of a host, for
// one repository.
type Client interface {
	CommitStatusWriter
	PullRequestReader
	PermissionReader
	TeamReader
	RevertProposer
	CommentWriter
	CommentReader
	ReviewReader
	CommitAuthorReader
}

// Host names a kind of source-code host.
type Host string

// The hosts a GitGate can name.
const (
	// HostGitHub is GitHub or GitHub Enterprise Server (spec.github, or
	// spec.scm with provider github).
	HostGitHub Host = "github"
	// HostGitea is Gitea or Forgejo (spec.scm with provider gitea).
	HostGitea Host = "gitea"
	// HostGitLab is gitlab.com or a self-managed GitLab (spec.scm with
	// provider gitlab).
	HostGitLab Host = "gitlab"
)

// Config is what a Factory builds a Client from: one repository and the
// data of the Secret holding its credentials. Each host's package reads the
// keys it documents.
type Config struct {
	// Repository names the repository as the host does ("owner/name").
	Repository string
	// APIURL is the host's API root; empty takes the host's default.
	APIURL string
	// SecretName names the Secret, for errors.
	SecretName string
	// Secret is the Secret's data.
	Secret map[string][]byte
	// Observer is told about every request; nil tells nobody.
	Observer Observer
}

// Factory builds the Client of one repository.
type Factory func(Config) (Client, error)

// Factories is a table of the hosts sluice can talk to: the one place that
// names them. Each host's package provides its Factory; the table is
// filled where they are all imported (gitops/scm/hosts).
type Factories map[Host]Factory

// New builds the Client of host from c.
func (f Factories) New(host Host, c Config) (Client, error) {
	factory, ok := f[host]
	if !ok {
		known := make([]string, 0, len(f))
		for h := range f {
			known = append(known, string(h))
		}
		sort.Strings(known)
		return nil, fmt.Errorf("unknown SCM host %q; known: %s", host, strings.Join(known, ", "))
	}
	return factory(c)
}
