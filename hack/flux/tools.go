//go:build tools

// Package tools pins the Flux controllers that the GitOps tests run
// (test/flux). It is never compiled; hack/flux/build.sh builds the commands
// listed here from this module's go.mod.
package tools

import (
	_ "github.com/fluxcd/kustomize-controller"
	_ "github.com/fluxcd/source-controller"
)
