package gitea

import (
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/gitops/scm"
)

var _ scm.Client = (*Client)(nil)

// Factory builds a Client for the table of hosts (gitops/scm/hosts) from
// the repository "owner/name", the server's root URL and the Secret's key
// "token".
func Factory(c scm.Config) (scm.Client, error) {
	owner, repo, _ := strings.Cut(c.Repository, "/")
	token := string(c.Secret["token"])
	if token == "" {
		return nil, fmt.Errorf("secret %s holds no token", c.SecretName)
	}
	cl, err := New(Options{Owner: owner, Repo: repo, BaseURL: c.APIURL, Token: token, Observer: c.Observer})
	if err != nil {
		return nil, err
	}
	return cl, nil
}
