//go:build tools

// Package tools pins kwok, which fakes the nodes and kubelets of the local
// test cluster. It is never compiled; hack/controlplane/build.sh builds it.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
