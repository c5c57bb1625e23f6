//go:build tools

// Package tools pins Gitea, the Git host the Gitea/Forgejo tests run against
// (test/gitea). It is never compiled; hack/gitea/build.sh builds it.
package tools

import _ "code.gitea.io/gitea"
