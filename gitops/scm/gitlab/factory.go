package gitlab

import (
	"fmt"

	"github.com/sluice-dev/sluice/gitops/scm"
)

var _ scm.Client = (*Client)(nil)

// DefaultBaseURL is the server a GitGate names when it names none.
const DefaultBaseURL = "https://gitlab.com"

// Factory builds a Client for the table of hosts (gitops/scm/hosts) from
// the project's full path, the server's root URL (gitlab.com when empty)
// and the Secret's key "token".
func Factory(c scm.Config) (scm.Client, error) {
	token := string(c.Secret["token"])
	if token == "" {
		return nil, fmt.Errorf("secret %s holds no token", c.SecretName)
	}
	base := c.APIURL
	if base == "" {
		base = DefaultBaseURL
	}
	cl, err := New(Options{Project: c.Repository, BaseURL: base, Token: token, Observer: c.Observer})
	if err != nil {
		return nil, err
	}
	return cl, nil
}
