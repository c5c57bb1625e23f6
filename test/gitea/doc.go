// Package gitea runs a real Gitea server for tests: the binary
// hack/gitea/build.sh builds from the Go module proxy, started on a free
// loopback port with SQLite in a temporary directory, with an administrator
// and, through Gitea's API (code.gitea.io/sdk/gitea), the users, tokens,
// organisations, teams, repositories, collaborators, webhooks, pull requests,
// labels and comments a test needs. Commits are pushed over HTTP with go-git.
//
// Start writes app.ini, runs "gitea migrate" and "gitea admin user create",
// starts "gitea web" and waits until the API answers. Stop ends exactly the
// process Start began. A package whose tests share one server uses Main:
//
//	var server *gitea.Server
//
//	func TestMain(m *testing.M) {
//		os.Exit(gitea.Main(m, gitea.Options{}, func(s *gitea.Server) error {
//			server = s
//			return nil
//		}))
//	}
//
// Without a build, Start fails and says to run "make gitea" (the first build
// takes many minutes; it is never started from inside a test). The server
// runs in its own process group and, on Linux, is killed by the kernel when
// the process that started it dies.
package gitea
