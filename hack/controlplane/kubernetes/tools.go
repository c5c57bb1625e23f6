//go:build tools

// Package tools pins the Kubernetes control-plane commands that the local
// test cluster runs. It is never compiled; hack/controlplane/build.sh builds
// the commands listed here from this module's go.mod.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
