// Package hosts is the factory table of the source-code hosts sluice's
// GitOps adapter talks to (gitops/scm.Factories): the only package that
// imports every host's implementation.
package hosts

import (
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/gitops/scm/gitea"
	"github.com/sluice-dev/sluice/gitops/scm/github"
	"github.com/sluice-dev/sluice/gitops/scm/gitlab"
)

// Default is the table of every host a GitGate can name.
func Default() scm.Factories {
	return scm.Factories{
		scm.HostGitHub: github.Factory,
		scm.HostGitea:  gitea.Factory,
		scm.HostGitLab: gitlab.Factory,
	}
}
