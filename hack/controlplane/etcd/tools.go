//go:build tools

// Package tools pins the etcd server that the local test cluster runs. It is
// never compiled; hack/controlplane/build.sh builds etcd from this module.
package tools

import _ "go.etcd.io/etcd/server/v3"
