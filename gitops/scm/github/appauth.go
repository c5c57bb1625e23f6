package github

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	gh "github.com/google/go-github/v56/github"
)

// App JWT and installation token timing: GitHub accepts a JWT for at most ten minutes and
// recommends back-dating iat against clock drift; installation tokens live an hour and are
// renewed this long before they expire.
const (
	jwtBackdate   = time.Minute
	jwtLifetime   = 9 * time.Minute
	tokenRenewal  = 5 * time.Minute
	defaultExpiry = time.Hour
)

// AppCredentials authenticate as a GitHub App installation.
type AppCredentials struct {
	// AppID is the App's numeric id (or use ClientID).
	AppID int64
	// ClientID is the App's client id, accepted by GitHub as the JWT issuer instead of AppID.
	ClientID string
	// InstallationID is the id of the App's installation on the repository's account.
	InstallationID int64
	// PrivateKeyPEM is the App's private key as GitHub generates it (PEM, PKCS#1 or PKCS#8).
	PrivateKeyPEM []byte
}

// ParsePrivateKey reads an RSA private key in PEM (PKCS#1 "RSA PRIVATE KEY" or PKCS#8
// "PRIVATE KEY").
func ParsePrivateKey(data []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("github app private key: no PEM block")
	}
	if key, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return key, nil
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("github app private key: %w", err)
	}
	key, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("github app private key: not an RSA key")
	}
	return key, nil
}

// appJWT returns the RS256-signed JSON Web Token that authenticates as the App itself.
func appJWT(key *rsa.PrivateKey, issuer string, now time.Time) (string, error) {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, err := json.Marshal(struct {
		IssuedAt  int64  `json:"iat"`
		ExpiresAt int64  `json:"exp"`
		Issuer    string `json:"iss"`
	}{
		IssuedAt:  now.Add(-jwtBackdate).Unix(),
		ExpiresAt: now.Add(jwtLifetime).Unix(),
		Issuer:    issuer,
	})
	if err != nil {
		return "", err
	}
	signingInput := header + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		return "", err
	}
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// installationTokens exchanges the App's JWT for an installation token and keeps it until
// shortly before it expires.
type installationTokens struct {
	app            *gh.Client // authenticated per request with the App's JWT
	key            *rsa.PrivateKey
	issuer         string
	installationID int64
	repo           string
	now            func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

// newInstallationTokens builds the token source of an App installation.
func newInstallationTokens(creds *AppCredentials, repo string, app *gh.Client, now func() time.Time) (*installationTokens, error) {
	key, err := ParsePrivateKey(creds.PrivateKeyPEM)
	if err != nil {
		return nil, err
	}
	issuer := creds.ClientID
	if issuer == "" {
		if creds.AppID <= 0 {
			return nil, errors.New("github app: AppID or ClientID is required")
		}
		issuer = strconv.FormatInt(creds.AppID, 10)
	}
	if creds.InstallationID <= 0 {
		return nil, errors.New("github app: InstallationID is required")
	}
	return &installationTokens{app: app, key: key, issuer: issuer, installationID: creds.InstallationID, repo: repo, now: now}, nil
}

// Token implements tokenSource.
func (s *installationTokens) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.token != "" && now.Before(s.expires.Add(-tokenRenewal)) {
		return s.token, nil
	}
	jwt, err := appJWT(s.key, s.issuer, now)
	if err != nil {
		return "", fmt.Errorf("signing the github app JWT: %w", err)
	}
	ctx = context.WithValue(ctx, appJWTKey{}, jwt)
	// Scoped to the one repository. (A nil options would send the body "null", which GitHub's
	// description does not allow.)
	tok, resp, err := s.app.Apps.CreateInstallationToken(ctx, s.installationID, &gh.InstallationTokenOptions{
		Repositories: []string{s.repo},
	})
	if err != nil {
		return "", mapError(err, resp, "installation token", now)
	}
	s.token = tok.GetToken()
	s.expires = tok.GetExpiresAt().Time
	if s.expires.IsZero() {
		s.expires = now.Add(defaultExpiry)
	}
	return s.token, nil
}

// Invalidate implements tokenSource.
func (s *installationTokens) Invalidate(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == token {
		s.token, s.expires = "", time.Time{}
	}
}

// appJWTKey carries the App JWT of a token request to jwtFromContext.
type appJWTKey struct{}

// jwtFromContext is the tokenSource of the App's own requests: the JWT the request carries.
type jwtFromContext struct{}

// Token implements tokenSource.
func (jwtFromContext) Token(ctx context.Context) (string, error) {
	jwt, _ := ctx.Value(appJWTKey{}).(string)
	if jwt == "" {
		return "", errors.New("github app request without a JWT")
	}
	return jwt, nil
}

// Invalidate implements tokenSource.
func (jwtFromContext) Invalidate(string) {}
