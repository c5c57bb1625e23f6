package gitopsgitea

import (
	"github.com/sluice-dev/sluice/test/flux"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
)

// fluxGitRepository is the GitRepository of ns that fetches repo's main
// branch from Gitea over HTTP (the repository is public).
func fluxGitRepository(ns string, repo *giteatest.Repo) flux.GitRepository {
	return flux.GitRepository{Namespace: ns, Name: "shop", URL: repo.CloneURL}
}

// fluxKustomization applies ./apps of that GitRepository into ns.
func fluxKustomization(ns string) flux.Kustomization {
	return flux.Kustomization{Namespace: ns, Name: "apps", Source: "shop", Path: "./apps", TargetNamespace: ns}
}
