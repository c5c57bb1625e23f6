package hosts

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestDefault_buildsGitHubAndNamesTheKnownHosts(t *testing.T) {
	f := Default()
	c, err := f.New(scm.HostGitHub, scm.Config{Repository: "acme/shop", SecretName: "github", Secret: map[string][]byte{"token": []byte("t")}})
	if err != nil || c == nil {
		t.Fatalf("New(github) = %v, %v", c, err)
	}
	if _, err := f.New(scm.HostGitHub, scm.Config{Repository: "acme/shop", SecretName: "github"}); err == nil || !strings.Contains(err.Error(), "secret github holds neither token") {
		t.Errorf("New(github) without credentials: %v, want the secret named", err)
	}
	if _, err := f.New("bitbucket", scm.Config{}); err == nil || !strings.Contains(err.Error(), `unknown SCM host "bitbucket"; known: gitea, github, gitlab`) {
		t.Errorf("New(bitbucket): %v, want the known hosts named", err)
	}
}
