package git_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// testTimeout bounds each network call of a test.
const testTimeout = 30 * time.Second

// must fails the test on an error: must(f())(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return c
}

func startServer(t *testing.T, o gitserver.Options) *gitserver.Server {
	t.Helper()
	s := must(gitserver.Start(o))(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close git server: %v", err)
		}
	})
	return s
}

// newReader reads branch of the repository name on s over plain HTTP.
func newReader(t *testing.T, s *gitserver.Server, name, branch string, o git.Options) git.Reader {
	t.Helper()
	o.URL = s.URL(name)
	o.Branch = branch
	o.AllowInsecureHTTP = true
	return must(git.New(o))(t)
}

// commitN writes n commits on branch, each changing file i%files, and
// returns their SHAs, oldest first.
func commitN(t *testing.T, r *gitserver.Repo, branch string, n, files int) []string {
	t.Helper()
	shas := make([]string, 0, n)
	for i := range n {
		sha := must(r.Commit(branch, gitserver.Change{
			Message: fmt.Sprintf("change %d", i),
			Files:   map[string]string{fmt.Sprintf("deploy/file-%d.yaml", i%files): fmt.Sprintf("version: %d\n", i)},
		}))(t)
		shas = append(shas, sha)
	}
	return shas
}

// uploads returns the upload-pack requests among reqs.
func uploads(reqs []gitserver.Request) []gitserver.Request {
	var out []gitserver.Request
	for _, q := range reqs {
		if strings.HasSuffix(q.Path, "/git-upload-pack") {
			out = append(out, q)
		}
	}
	return out
}

// objectsSent sums the objects of the packs in reqs.
func objectsSent(reqs []gitserver.Request) int {
	n := 0
	for _, q := range uploads(reqs) {
		if q.Objects > 0 {
			n += q.Objects
		}
	}
	return n
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
