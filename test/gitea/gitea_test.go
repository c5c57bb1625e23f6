package gitea

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

var server *Server

func TestMain(m *testing.M) {
	os.Exit(Main(m, Options{}, func(s *Server) error {
		server = s
		return nil
	}))
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// delivery is one webhook request the test receiver got.
type delivery struct {
	event, eventType, id string
	signed               bool
	body                 string
}

// hookReceiver records deliveries and checks each one's X-Gitea-Signature.
type hookReceiver struct {
	secret []byte
	mu     sync.Mutex
	got    []delivery
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m := hmac.New(sha256.New, h.secret)
	m.Write(body)
	want := hex.EncodeToString(m.Sum(nil))
	h.mu.Lock()
	h.got = append(h.got, delivery{
		event: r.Header.Get("X-Gitea-Event"), eventType: r.Header.Get("X-Gitea-Event-Type"), id: r.Header.Get("X-Gitea-Delivery"),
		signed: hmac.Equal([]byte(want), []byte(r.Header.Get("X-Gitea-Signature"))), body: string(body),
	})
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// waitFor polls the deliveries until one of eventType whose body contains marker arrived.
func (h *hookReceiver) waitFor(t *testing.T, eventType, marker string) delivery {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		h.mu.Lock()
		var types []string
		for _, d := range h.got {
			if d.eventType == eventType && strings.Contains(d.body, marker) {
				h.mu.Unlock()
				return d
			}
			types = append(types, d.eventType)
		}
		h.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no %s delivery containing %q arrived; got %v", eventType, marker, types)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestServer_pullRequestLifecycle_asTwoUsers_withSignedWebhooks(t *testing.T) {
	ctx := testContext(t)
	s := server

	// Given two users, an organisation whose team holds bob, and a repository of the
	// organisation the team may write to, with a webhook to a local receiver.
	alice, err := s.CreateUser(ctx, "alice")
	check(t, err)
	bob, err := s.CreateUser(ctx, "bob")
	check(t, err)
	org, err := s.CreateOrg(ctx, alice, "acme")
	check(t, err)
	team, err := org.CreateTeam(ctx, "releasers", sdk.AccessModeWrite, false, bob)
	check(t, err)
	repo, err := s.CreateRepo(ctx, alice, org.Name, "app")
	check(t, err)
	if err := team.AddRepository(ctx, repo); err != nil {
		t.Fatal(err)
	}
	hooks := &hookReceiver{secret: []byte("s3cret")}
	receiver := httptest.NewServer(hooks)
	t.Cleanup(receiver.Close)
	_, err = repo.CreateWebhook(ctx, alice, Webhook{
		URL: receiver.URL, Secret: "s3cret",
		Events: []string{"push", "pull_request", "pull_request_label", "issue_comment", "pull_request_comment"},
	})
	check(t, err)

	// When bob pushes a branch with go-git and opens a pull request of it.
	co, err := repo.Clone(ctx, bob)
	check(t, err)
	head, err := co.CommitAndPush(ctx, "feature", Change{Write: map[string]string{"deploy/app.yaml": "image: app:v2\n"}, Message: "Ship v2"})
	check(t, err)
	got, err := repo.BranchHead(ctx, alice, "feature")
	check(t, err)
	if got != head {
		t.Fatalf("branch feature is at %s on the server, pushed %s", got, head)
	}
	pr, err := repo.OpenPullRequest(ctx, bob, "feature", "main", "Ship v2")
	check(t, err)
	if pr.Head == nil || pr.Head.Sha != head {
		t.Fatalf("pull request head = %+v, want %s", pr.Head, head)
	}

	// And alice adds a label, removes it, and bob adds it again, then bob comments.
	if err := repo.EnsureLabels(ctx, alice, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { return repo.AddLabels(ctx, alice, pr.Index, "sluice/approve") },
		func() error { return repo.RemoveLabel(ctx, alice, pr.Index, "sluice/approve") },
		func() error { return repo.AddLabels(ctx, bob, pr.Index, "sluice/approve") },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	_, err = repo.Comment(ctx, bob, pr.Index, "/sluice approve")
	check(t, err)

	// Then the pull request carries the label.
	api, err := alice.API(ctx)
	check(t, err)
	labels, _, err := api.GetIssueLabels(repo.Owner, repo.Name, pr.Index, sdk.ListLabelsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 1 || labels[0].Name != "sluice/approve" {
		t.Fatalf("labels = %v, want [sluice/approve]", labels)
	}

	// When alice merges it, main holds the merge commit.
	merged, err := repo.MergePullRequest(ctx, alice, pr.Index, sdk.MergeStyleMerge)
	check(t, err)
	got, err = repo.BranchHead(ctx, alice, "main")
	check(t, err)
	if got != *merged.MergedCommitID {
		t.Fatalf("main is at %s, the merge commit is %s", got, *merged.MergedCommitID)
	}

	// Then every step was delivered to the webhook, signed with its secret.
	for _, want := range []struct{ eventType, marker string }{
		{"push", `refs/heads/feature`},
		{"pull_request", `"opened"`},
		{"pull_request_label", `"label_updated"`},
		{"pull_request_comment", `/sluice approve`},
		{"pull_request", `"closed"`},
		{"push", *merged.MergedCommitID},
	} {
		d := hooks.waitFor(t, want.eventType, want.marker)
		if !d.signed || d.id == "" {
			t.Errorf("%s delivery %q: signed=%v, want a valid X-Gitea-Signature and a delivery id", want.eventType, d.id, d.signed)
		}
	}

	// And bob, who is in the team, can push to main too, while a stranger cannot see
	// the team's members.
	if err := co.Pull(ctx); err != nil {
		t.Fatal(err)
	}
	if err := co.Switch("main"); err != nil {
		t.Fatal(err)
	}
	if err := co.Pull(ctx); err != nil {
		t.Fatal(err)
	}
	direct, err := co.CommitAndPush(ctx, "main", Change{Write: map[string]string{"deploy/app.yaml": "image: app:v3\n"}, Message: "Ship v3"})
	check(t, err)
	got, err = repo.BranchHead(ctx, alice, "main")
	check(t, err)
	if got != direct {
		t.Fatalf("main is at %s after bob's push of %s", got, direct)
	}
	carol, err := s.CreateUser(ctx, "carol")
	check(t, err)
	capi, err := carol.API(ctx)
	check(t, err)
	_, resp, err := capi.GetTeamMember(team.ID, bob.Login)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("carol reading team members: %v, want 403 or 404", err)
	}
}

func TestServer_leastPrivilegeToken_cannotAdminister(t *testing.T) {
	ctx := testContext(t)
	dave, err := server.CreateUser(ctx, "dave", "read:repository", "read:user")
	check(t, err)
	api, err := dave.API(ctx)
	check(t, err)
	if _, _, err := api.CreateRepo(sdk.CreateRepoOption{Name: "nope"}); err == nil {
		t.Fatal("a read-only token created a repository")
	}
	me, _, err := api.GetMyUserInfo()
	if err != nil || me.UserName != "dave" {
		t.Fatalf("GetMyUserInfo = %v, %v; want dave", me, err)
	}
}

func TestStart_withoutBuild_failsWithTheFix(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	_, err := Start(context.Background(), Options{})
	var nb *NotBuiltError
	if !errors.As(err, &nb) {
		t.Fatalf("Start without a build = %v, want a *NotBuiltError", err)
	}
	if !strings.Contains(err.Error(), "make gitea") {
		t.Fatalf("error %q does not name the fix", err)
	}
}
