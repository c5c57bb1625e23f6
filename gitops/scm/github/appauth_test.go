package github

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func appKey(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// The App tests run the fake on the real clock: ghinstallation signs the App's JWTs and
// times its tokens by time.Now.
func TestAppAuth_installationTokenCachedUntilShortlyBeforeExpiry(t *testing.T) {
	clock := newClock()
	fake, sha := startFake(t, clock)
	fake.SetClock(time.Now)
	key, keyPEM := appKey(t)
	fake.AddApp(4711, "Iv1.sluice", 99, &key.PublicKey, "sluice", time.Hour)
	c, err := New(Options{
		Owner: "acme", Repo: "app", BaseURL: fake.URL, Now: clock.Now,
		App: &AppCredentials{AppID: 4711, InstallationID: 99, PrivateKeyPEM: keyPEM},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	post := func(c *Client, desc string) {
		t.Helper()
		if _, err := c.SetStatus(ctx, sha, scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: desc}); err != nil {
			t.Fatalf("SetStatus(%s): %v", desc, err)
		}
	}

	// The first call exchanges the App JWT for an installation token; the status is posted as
	// the App's bot.
	post(c, "step 1/3")
	if n := fake.InstallationTokens(); n != 1 {
		t.Fatalf("installation tokens = %d, want 1", n)
	}
	if got := fake.Statuses(testRepo, sha); len(got) != 1 || got[0].Creator != "sluice[bot]" {
		t.Fatalf("statuses = %+v, want one by sluice[bot]", got)
	}
	// Calls within the token's life reuse it.
	post(c, "step 2/3")
	if n := fake.InstallationTokens(); n != 1 {
		t.Fatalf("installation tokens after a second call = %d, want 1", n)
	}
	// A token within a minute of its expiry is renewed before the request: an installation
	// whose tokens live 30 seconds gets a new one for every call.
	fake.AddApp(4712, "", 100, &key.PublicKey, "sluice", 30*time.Second)
	short, err := New(Options{
		Owner: "acme", Repo: "app", BaseURL: fake.URL, Now: clock.Now,
		App: &AppCredentials{AppID: 4712, InstallationID: 100, PrivateKeyPEM: keyPEM},
	})
	if err != nil {
		t.Fatal(err)
	}
	post(short, "step 3/3")
	first := fake.InstallationTokens() - 1
	post(short, "step 3/3, again")
	if again := fake.InstallationTokens() - 1 - first; first < 1 || again < 1 {
		t.Fatalf("installation tokens of two calls with short-lived tokens = %d and %d, want at least one each", first, again)
	}
	if got := fake.Statuses(testRepo, sha); len(got) != 4 {
		t.Fatalf("statuses = %d, want 4", len(got))
	}

	// A token GitHub no longer accepts fails one call (401) and is dropped: the next call gets
	// a new one.
	before := fake.InstallationTokens()
	fake.RevokeInstallationTokens()
	if _, err := c.PullRequestsForCommit(ctx, sha); !scm.IsUnauthorized(err) {
		t.Fatalf("call with a revoked token: %v, want UnauthorizedError", err)
	}
	if _, err := c.PullRequestsForCommit(ctx, sha); err != nil {
		t.Fatalf("call after the revoked token was dropped: %v", err)
	}
	if n := fake.InstallationTokens() - before; n != 1 {
		t.Fatalf("installation tokens after a revocation = %d more, want 1", n)
	}
}

func TestAppAuth_rejectedKeyIsUnauthorized(t *testing.T) {
	clock := newClock()
	fake, sha := startFake(t, clock)
	fake.SetClock(time.Now)
	registered, _ := appKey(t)
	_, otherPEM := appKey(t)
	fake.AddApp(4711, "", 99, &registered.PublicKey, "sluice", time.Hour)
	c, err := New(Options{
		Owner: "acme", Repo: "app", BaseURL: fake.URL, Now: clock.Now,
		App: &AppCredentials{AppID: 4711, InstallationID: 99, PrivateKeyPEM: otherPEM},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PullRequestsForCommit(context.Background(), sha)
	if !scm.IsUnauthorized(err) {
		t.Fatalf("error = %v, want UnauthorizedError", err)
	}
	if n := fake.Count("repos/list-pull-requests-associated-with-commit"); n != 0 {
		t.Fatalf("API requests without a token = %d, want 0", n)
	}
}

func TestNew_rejectsBadOptions(t *testing.T) {
	_, keyPEM := appKey(t)
	tests := []struct {
		name string
		opts Options
	}{
		{name: "no repository", opts: Options{Owner: "acme", Token: "t"}},
		{name: "no credentials", opts: Options{Owner: "acme", Repo: "app"}},
		{name: "both credentials", opts: Options{Owner: "acme", Repo: "app", Token: "t", App: &AppCredentials{AppID: 1, InstallationID: 2, PrivateKeyPEM: keyPEM}}},
		{name: "app without installation", opts: Options{Owner: "acme", Repo: "app", App: &AppCredentials{AppID: 1, PrivateKeyPEM: keyPEM}}},
		{name: "app without key", opts: Options{Owner: "acme", Repo: "app", App: &AppCredentials{AppID: 1, InstallationID: 2}}},
		{name: "base URL not http", opts: Options{Owner: "acme", Repo: "app", Token: "t", BaseURL: "ftp://ghe.example.com/api/v3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts); err == nil {
				t.Fatal("New accepted bad options")
			}
		})
	}
}

func TestNew_enterpriseBaseURL(t *testing.T) {
	c, err := New(Options{Owner: "acme", Repo: "app", Token: "t", BaseURL: "https://ghe.example.com/api/v3"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.gh.BaseURL.String(); got != "https://ghe.example.com/api/v3/" {
		t.Fatalf("base URL = %s", got)
	}
}
