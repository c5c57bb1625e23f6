package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v56/github"
	ghapps "github.com/google/go-github/v88/github" // the go-github of ghinstallation's options
)

// AppCredentials authenticate as a GitHub App installation.
type AppCredentials struct {
	// AppID is the App's numeric id, the issuer of its JWTs.
	AppID int64
	// InstallationID is the id of the App's installation on the repository's account.
	InstallationID int64
	// PrivateKeyPEM is the App's private key as GitHub generates it (PEM, PKCS#1 or PKCS#8).
	PrivateKeyPEM []byte
}

// installationTokens hands out the installation tokens of an App installation, scoped to one
// repository, through github.com/bradleyfalzon/ghinstallation: it signs the App's JWT,
// exchanges it for a token and keeps the token until a minute before it expires. What is
// sluice's own is Invalidate: ghinstallation cannot drop a token GitHub no longer accepts,
// so the installation's transport is replaced by a fresh one, which fetches a new token.
type installationTokens struct {
	apps           *ghinstallation.AppsTransport
	installationID int64
	baseURL        string
	repo           string
	timeout        time.Duration // bounds a token request; 0 for none
	now            func() time.Time

	mu      sync.Mutex
	current *ghinstallation.Transport
	token   string // the token current handed out last
}

// newInstallationTokens builds the token source of an App installation. Its token requests
// are sent through rt (signed with the App's JWT by ghinstallation) to the API at baseURL.
func newInstallationTokens(creds *AppCredentials, repo, baseURL string, rt http.RoundTripper, timeout time.Duration, now func() time.Time) (*installationTokens, error) {
	if creds.AppID <= 0 {
		return nil, errors.New("github app: AppID is required")
	}
	if creds.InstallationID <= 0 {
		return nil, errors.New("github app: InstallationID is required")
	}
	apps, err := ghinstallation.NewAppsTransport(rt, creds.AppID, creds.PrivateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("github app private key: %w", err)
	}
	s := &installationTokens{apps: apps, installationID: creds.InstallationID, baseURL: baseURL, repo: repo, timeout: timeout, now: now}
	s.current = s.fresh()
	return s, nil
}

// fresh is a ghinstallation transport of the installation that holds no token yet.
func (s *installationTokens) fresh() *ghinstallation.Transport {
	t := ghinstallation.NewFromAppsTransport(s.apps, s.installationID)
	t.BaseURL = s.baseURL
	// Scoped to the one repository. (Without options the token would cover every
	// repository of the installation.)
	t.InstallationTokenOptions = &ghapps.InstallationTokenOptions{Repositories: []string{s.repo}}
	return t
}

// Token implements tokenSource.
func (s *installationTokens) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	t := s.current
	s.mu.Unlock()
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	token, err := t.Token(ctx)
	if err != nil {
		return "", s.mapError(err)
	}
	s.mu.Lock()
	if s.current == t {
		s.token = token
	}
	s.mu.Unlock()
	return token, nil
}

// Invalidate implements tokenSource.
func (s *installationTokens) Invalidate(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == token {
		s.current, s.token = s.fresh(), ""
	}
}

// mapError turns a failed token request into the scm errors, as for any other request.
func (s *installationTokens) mapError(err error) error {
	var httpErr *ghinstallation.HTTPError
	if !errors.As(err, &httpErr) || httpErr.Response == nil {
		return mapError(err, nil, "installation token", s.now())
	}
	resp := httpErr.Response
	defer func() { _ = resp.Body.Close() }()
	if checked := gh.CheckResponse(resp); checked != nil {
		err = checked
	}
	return mapError(err, &gh.Response{Response: resp}, "installation token", s.now())
}
