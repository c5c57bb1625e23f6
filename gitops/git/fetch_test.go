package git_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

func TestReader_fetch_returnsTheHeadCommit(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("app.git", "main"))(t)
	first := commitN(t, repo, "main", 1, 1)[0]
	author := &object.Signature{Name: "Jane Doe", Email: "jane@example.com", When: time.Date(2026, 3, 1, 9, 30, 0, 0, time.FixedZone("", 3600))}
	committer := &object.Signature{Name: "Merge Bot", Email: "bot@example.com", When: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	msg := "Bump checkout to v2\n\nBody line.\n\nSluice-Approve: shop/checkout step=1\n"
	head := must(repo.Commit("main", gitserver.Change{Message: msg, Files: map[string]string{"app.yaml": "v2"}, Author: author, Committer: committer}))(t)
	obj := must(repo.CommitObject(head))(t)

	r := newReader(t, s, "app.git", "main", git.Options{})
	got := must(r.Fetch(ctx(t)))(t)

	if got.SHA != head || got.Message != msg || got.Subject() != "Bump checkout to v2" {
		t.Errorf("commit %s %q, want %s %q", got.SHA, got.Message, head, msg)
	}
	if got.Author.Name != "Jane Doe" || got.Author.Email != "jane@example.com" || !got.Author.When.Equal(author.When) {
		t.Errorf("author %+v, want %+v", got.Author, author)
	}
	if _, off := got.Author.When.Zone(); off != 3600 {
		t.Errorf("author time zone offset %d, want 3600", off)
	}
	if got.Committer.Name != "Merge Bot" || !got.Committer.When.Equal(committer.When) {
		t.Errorf("committer %+v, want %+v", got.Committer, committer)
	}
	if !slices.Equal(got.Parents, []string{first}) || got.Tree != obj.TreeHash.String() || got.Signature != "" || got.IsMerge() {
		t.Errorf("parents %v tree %s signature %q, want [%s] %s unsigned", got.Parents, got.Tree, got.Signature, first, obj.TreeHash)
	}
	again := must(r.Commit(ctx(t), first))(t)
	if again.SHA != first || again.Subject() != "change 0" {
		t.Errorf("Commit(%s) = %s %q", first, again.SHA, again.Subject())
	}
}

func TestReader_fetch_afterNewCommits_transfersOnlyWhatIsNew(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("app.git", "main"))(t)
	commitN(t, repo, "main", 30, 6)
	r := newReader(t, s, "app.git", "main", git.Options{})

	// Given a first fetch of the whole (short) history.
	must(r.Fetch(ctx(t)))(t)
	first := uploads(s.Requests())
	// 30 commits, 30 root trees, 30 deploy/ trees, 30 blobs.
	if len(first) != 1 || first[0].Objects != 120 || first[0].Deepen != git.DefaultDepth || first[0].Haves != 0 {
		t.Fatalf("first fetch: %+v, want one request for %d commits sending 120 objects", first, git.DefaultDepth)
	}

	// When nothing changed, a fetch sends nothing.
	s.ResetRequests()
	must(r.Fetch(ctx(t)))(t)
	if n := objectsSent(s.Requests()); n != 0 {
		t.Errorf("fetch with nothing new: %d objects sent, want 0 (%+v)", n, s.Requests())
	}

	// When one commit changes one file, a fetch brings that commit, its
	// two trees and the blob, and says what it has.
	s.ResetRequests()
	head := commitN(t, repo, "main", 1, 6)[0]
	got := must(r.Fetch(ctx(t)))(t)
	if got.SHA != head {
		t.Errorf("head %s, want %s", got.SHA, head)
	}
	next := uploads(s.Requests())
	if len(next) != 1 || next[0].Objects != 4 || next[0].Haves == 0 {
		t.Errorf("incremental fetch: %+v, want one request with haves sending 4 objects", next)
	}
	if next[0].Bytes*10 > first[0].Bytes {
		t.Errorf("incremental fetch took %d bytes, the first %d", next[0].Bytes, first[0].Bytes)
	}
}

func TestReader_shallowCopy_deepensOnlyWhenOlderHistoryIsNeeded(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("app.git", "main"))(t)
	shas := commitN(t, repo, "main", 80, 3)
	r := newReader(t, s, "app.git", "main", git.Options{Depth: 5})

	must(r.Fetch(ctx(t)))(t)
	first := uploads(s.Requests())
	sent := objectsSent(first)
	// 5 commits, 5 root trees, 5 deploy/ trees, the 3 files of the oldest
	// and the file each of the 4 others changed.
	if len(first) != 1 || first[0].Deepen != 5 || first[0].Objects != 22 {
		t.Fatalf("first fetch: %+v, want depth 5 sending 22 objects", first)
	}

	// Commits within the fetched depth need no request.
	s.ResetRequests()
	recent := must(r.CommitsSince(ctx(t), shas[77]))(t)
	if len(recent) != 2 || len(s.Requests()) != 0 {
		t.Errorf("commits since the third newest: %d, with requests %+v; want 2 and none", len(recent), s.Requests())
	}

	// An older commit deepens the copy to DefaultDepth commits, then the
	// whole history.
	c := must(r.Commit(ctx(t), shas[40]))(t)
	if c.Subject() != "change 40" {
		t.Errorf("commit %s: %q", shas[40], c.Subject())
	}
	deepen := uploads(s.Requests())
	if len(deepen) != 1 || deepen[0].Deepen != git.DefaultDepth || deepen[0].Shallows == 0 {
		t.Errorf("deepening: %+v, want one request for %d commits naming the shallow boundary", deepen, git.DefaultDepth)
	}
	sent += objectsSent(s.Requests())
	s.ResetRequests()
	since := must(r.CommitsSince(ctx(t), shas[0]))(t)
	if len(since) != 79 || since[0].SHA != shas[1] || since[78].SHA != shas[79] {
		t.Errorf("commits since the root: %d, want 79 from %s to %s", len(since), shas[1], shas[79])
	}
	deepen = uploads(s.Requests())
	if len(deepen) != 1 || deepen[0].Deepen != 2*git.DefaultDepth {
		t.Errorf("deepening: %+v, want one request for %d commits", deepen, 2*git.DefaultDepth)
	}
	// The three fetches brought the 320 objects (80 commits, 160 trees,
	// 80 blobs) about once: a deepening fetch names no haves, so the server
	// may send again the few trees and blobs the shallow boundary commit
	// shares with the older history, but never the history already here.
	if sent += objectsSent(deepen); sent < 320 || sent > 320+2*4 {
		t.Errorf("the three fetches sent %d objects, want 320 plus at most 4 per deepening", sent)
	}

	// Then the copy is complete: nothing more is asked for.
	s.ResetRequests()
	must(r.Commit(ctx(t), shas[0]))(t)
	if len(s.Requests()) != 0 {
		t.Errorf("requests after the whole history is here: %+v", s.Requests())
	}
}

func TestReader_commitNotOnTheBranch_isNotFoundAfterTheWholeHistory(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("app.git", "main"))(t)
	shas := commitN(t, repo, "main", 3, 1)
	if err := repo.Branch("other", shas[0]); err != nil {
		t.Fatal(err)
	}
	elsewhere := commitN(t, repo, "other", 1, 2)[0]
	r := newReader(t, s, "app.git", "main", git.Options{Depth: 1})
	must(r.Fetch(ctx(t)))(t)

	_, err := r.Commit(ctx(t), elsewhere)
	if !errors.Is(err, git.ErrCommitNotFound) {
		t.Fatalf("commit of another branch: %v, want ErrCommitNotFound", err)
	}
	reqs := uploads(s.Requests())
	if len(reqs) != 2 || reqs[1].Deepen != git.DefaultDepth {
		t.Errorf("requests %+v, want the first fetch and one deepening past the 3 commits", reqs)
	}
	// The copy holds the whole history now: asking again asks nobody.
	s.ResetRequests()
	if _, err := r.Commit(ctx(t), elsewhere); !errors.Is(err, git.ErrCommitNotFound) || len(s.Requests()) != 0 {
		t.Errorf("second lookup: %v with requests %+v, want ErrCommitNotFound and none", err, s.Requests())
	}
	for _, want := range []string{elsewhere, `branch "main"`, s.URL("app.git")} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestReader_errors_nameWhatFailed(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("app.git", "main"))(t)
	commitN(t, repo, "main", 1, 1)
	if _, err := s.CreateRepo("empty.git", "main"); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, repo, branch string
		want               error
	}{
		{name: "missing branch", repo: "app.git", branch: "release", want: git.ErrBranchNotFound},
		{name: "empty repository", repo: "empty.git", branch: "main", want: git.ErrBranchNotFound},
		{name: "missing repository", repo: "nothing.git", branch: "main", want: git.ErrRepositoryNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReader(t, s, tc.repo, tc.branch, git.Options{})
			_, err := r.Fetch(ctx(t))
			if !errors.Is(err, tc.want) {
				t.Fatalf("fetch: %v, want %v", err, tc.want)
			}
			if !contains(err.Error(), s.URL(tc.repo)) || !contains(err.Error(), `"`+tc.branch+`"`) {
				t.Errorf("error %q does not name the URL and branch", err)
			}
			if _, err := r.CommitsSince(ctx(t), "0123456789012345678901234567890123456789"); !errors.Is(err, git.ErrNotFetched) {
				t.Errorf("read before a fetch: %v, want ErrNotFetched", err)
			}
		})
	}

	r := newReader(t, s, "app.git", "main", git.Options{})
	must(r.Fetch(ctx(t)))(t)
	for _, sha := range []string{"", "abc1234", "zz23456789012345678901234567890123456789"} {
		if _, err := r.Commit(ctx(t), sha); !errors.Is(err, git.ErrInvalidSHA) {
			t.Errorf("Commit(%q): %v, want ErrInvalidSHA", sha, err)
		}
	}
}

func TestReader_cacheDir_keepsTheCopyAcrossRestarts(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("app.git", "main"))(t)
	shas := commitN(t, repo, "main", 20, 4)
	dir := t.TempDir()

	before := newReader(t, s, "app.git", "main", git.Options{CacheDir: dir})
	must(before.Fetch(ctx(t)))(t)
	if n := objectsSent(s.Requests()); n != 80 {
		t.Fatalf("first fetch sent %d objects, want 80", n)
	}

	// A new Reader on the same directory, as after a restart, fetches only
	// the new commit and reads the old ones from disk.
	s.ResetRequests()
	head := commitN(t, repo, "main", 1, 4)[0]
	after := newReader(t, s, "app.git", "main", git.Options{CacheDir: dir})
	if got := must(after.Fetch(ctx(t)))(t); got.SHA != head {
		t.Errorf("head %s, want %s", got.SHA, head)
	}
	if n := objectsSent(s.Requests()); n != 4 {
		t.Errorf("fetch after the restart sent %d objects, want 4", n)
	}
	since := must(after.CommitsSince(ctx(t), shas[0]))(t)
	if len(since) != 20 {
		t.Errorf("commits since the first: %d, want 20", len(since))
	}
}
