package github

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// openPull opens a pull request of a branch changing the app's image, by dev.
func openPull(fake *githubfake.Server) int {
	fake.Commit(testRepo, "bump", "main", "Bump image", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, githubfake.Signature{Name: "dev", Email: "dev@example.com"})
	return fake.OpenPullRequest(testRepo, "bump", "main", "Bump image", "dev")
}

// One sticky comment per key: created once, edited in place when its text changes, and not
// written at all when it does not; a client started afresh finds it by its marker.
func TestUpsertComment_createsOnceEditsInPlaceAndSkipsUnchanged(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	pr := openPull(fake)
	fake.AddComment(testRepo, pr, "dev", "Please review.")
	c := newTestClient(t, fake, clock)
	ctx := context.Background()
	upsert := func(c *Client, key, body string, wantPosted bool) {
		t.Helper()
		posted, err := c.UpsertComment(ctx, pr, key, body)
		if err != nil {
			t.Fatalf("UpsertComment(%s, %q): %v", key, body, err)
		}
		if posted != wantPosted {
			t.Fatalf("UpsertComment(%s, %q) posted = %v, want %v", key, body, posted, wantPosted)
		}
	}

	upsert(c, "prod/checkout", "step 1/3 paused", true)
	upsert(c, "prod/checkout", "step 1/3 paused", false)
	upsert(c, "prod/checkout", "step 2/3 paused", true)
	upsert(c, "prod/cart", "step 1/2 paused", true)
	if n := fake.Count("issues/create-comment"); n != 2 {
		t.Fatalf("comments created = %d, want 2 (one per key)", n)
	}
	if n := fake.Count("issues/update-comment"); n != 1 {
		t.Fatalf("comments edited = %d, want 1", n)
	}
	list := fake.Comments(testRepo, pr)
	if len(list) != 3 || list[1].Author != "sluice-bot" || !strings.HasPrefix(list[1].Body, "step 2/3 paused") ||
		!strings.Contains(list[1].Body, scm.CommentMarker("prod/checkout")) || list[1].Edits != 1 {
		t.Fatalf("comments = %+v, want dev's, then sluice-bot's for prod/checkout edited once, then prod/cart", list)
	}

	// A new client (sluice restarted) reads the comments once, recognises its own and leaves
	// an unchanged one alone.
	again := newTestClient(t, fake, clock)
	upsert(again, "prod/checkout", "step 2/3 paused", false)
	upsert(again, "prod/checkout", "step 3/3 done", true)
	if n := fake.Count("issues/create-comment"); n != 2 {
		t.Fatalf("comments created after a restart = %d, want still 2", n)
	}
	if n := fake.Count("users/get-authenticated"); n != 2 {
		t.Fatalf("GET /user = %d, want once per client", n)
	}
}

// A comment by someone else that carries sluice's marker is not sluice's: it is never edited,
// and sluice writes its own.
func TestUpsertComment_leavesOthersMarkedCommentsAlone(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	pr := openPull(fake)
	fake.SetRole(testRepo, "mallory", githubfake.RoleWrite)
	forged := fake.AddComment(testRepo, pr, "mallory", "approved by everyone\n\n"+scm.CommentMarker("prod/checkout"))
	c := newTestClient(t, fake, clock)
	if _, err := c.UpsertComment(context.Background(), pr, "prod/checkout", "step 1/3 paused"); err != nil {
		t.Fatal(err)
	}
	list := fake.Comments(testRepo, pr)
	if len(list) != 2 || list[0].ID != forged || list[0].Edits != 0 || list[1].Author != "sluice-bot" {
		t.Fatalf("comments = %+v, want mallory's untouched and sluice-bot's new one", list)
	}
}

// A comment deleted by a person is written anew; a body too long for GitHub is cut, the
// marker kept.
func TestUpsertComment_deletedIsRecreatedAndLongBodyCut(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	pr := openPull(fake)
	c := newTestClient(t, fake, clock)
	ctx := context.Background()
	if _, err := c.UpsertComment(ctx, pr, "prod/checkout", "first"); err != nil {
		t.Fatal(err)
	}
	fake.DeleteComment(testRepo, fake.Comments(testRepo, pr)[0].ID)
	if posted, err := c.UpsertComment(ctx, pr, "prod/checkout", strings.Repeat("x", 70000)); err != nil || !posted {
		t.Fatalf("UpsertComment after a deletion = %v, %v; want posted", posted, err)
	}
	list := fake.Comments(testRepo, pr)
	if len(list) != 1 || len([]rune(list[0].Body)) > scm.MaxCommentLength || !strings.HasSuffix(list[0].Body, scm.CommentMarker("prod/checkout")) {
		t.Fatalf("comments = %d, the last of %d characters; want one, cut to %d with its marker", len(list), len([]rune(list[len(list)-1].Body)), scm.MaxCommentLength)
	}
	if _, err := c.UpsertComment(ctx, pr, "not a key --", "x"); err == nil {
		t.Fatal("a key that could end the marker was accepted")
	}
}

// As a GitHub App, sluice's comments are its bot's ("<slug>[bot]", read from GET /app with the
// App's JWT, since an installation token cannot read GET /user).
func TestUpsertComment_asAppRecognisesItsBot(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	fake.SetClock(time.Now)
	pr := openPull(fake)
	key, keyPEM := appKey(t)
	fake.AddApp(4711, "", 99, &key.PublicKey, "sluice", time.Hour)
	opts := Options{Owner: "acme", Repo: "app", BaseURL: fake.URL, App: &AppCredentials{AppID: 4711, InstallationID: 99, PrivateKeyPEM: keyPEM}}
	for i, body := range []string{"step 1/3 paused", "step 2/3 paused"} {
		c, err := NewApp(opts) // a new client each time: it must find its comment again
		if err != nil {
			t.Fatal(err)
		}
		if posted, err := c.UpsertComment(context.Background(), pr, "prod/checkout", body); err != nil || !posted {
			t.Fatalf("UpsertComment %d = %v, %v; want posted", i, posted, err)
		}
	}
	list := fake.Comments(testRepo, pr)
	if len(list) != 1 || list[0].Author != "sluice[bot]" || list[0].Edits != 1 {
		t.Fatalf("comments = %+v, want one by sluice[bot], edited once", list)
	}
}
