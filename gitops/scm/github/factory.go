package github

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/gitops/scm"
)

var _ scm.Client = (*Client)(nil)

// Factory builds a Client for the table of hosts (gitops/scm/hosts) from
// the repository "owner/name", the API URL and the Secret's keys: "token",
// or a GitHub App's "appID", "installationID" and "privateKey" (PEM). With
// an App's credentials it builds an AppClient, which also writes check runs
// (scm.CheckRunWriter).
func Factory(c scm.Config) (scm.Client, error) {
	owner, repo, _ := strings.Cut(c.Repository, "/")
	opts := Options{Owner: owner, Repo: repo, BaseURL: c.APIURL, Token: string(c.Secret["token"]), Observer: c.Observer}
	if opts.Token == "" {
		app := &AppCredentials{PrivateKeyPEM: c.Secret["privateKey"]}
		app.AppID, _ = strconv.ParseInt(string(c.Secret["appID"]), 10, 64)
		app.InstallationID, _ = strconv.ParseInt(string(c.Secret["installationID"]), 10, 64)
		if len(app.PrivateKeyPEM) == 0 || app.AppID == 0 || app.InstallationID == 0 {
			return nil, fmt.Errorf("secret %s holds neither token nor appID, installationID and privateKey", c.SecretName)
		}
		opts.App = app
		cl, err := NewApp(opts)
		if err != nil {
			return nil, fmt.Errorf("github: %w", err)
		}
		return cl, nil
	}
	cl, err := New(opts)
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	return cl, nil
}
