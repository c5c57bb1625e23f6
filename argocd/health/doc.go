// Package health holds sluice's Argo CD health checks: one Lua script per kind, in Argo CD's
// resource_customizations layout (<group>/<Kind>/health.lua with health_test.yaml and
// testdata/), and the tests that run every fixture through gopher-lua the way Argo CD does.
// docs/argocd.md inlines the scripts into an argocd-cm snippet; a test keeps that copy equal
// to the files (SLUICE_UPDATE_DOCS=1 rewrites it).
package health
