package gitlab

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/gitlabfake"
)

// One sticky note per key on a merge request: created once, edited in place when its text
// changes, and not written when it does not; GitLab's system notes and a marked note by
// someone else are never taken for sluice's.
func TestUpsertComment_stickyNoteOnMergeRequest(t *testing.T) {
	w := newWorld(t)
	iid, _ := w.mergedChange("bump", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, "Bump image", gitlabfake.MergeCommit)
	w.fake.AddSystemNote(testProject, iid, "sluice-bot", "added ~sluice/approve label\n\n"+scm.CommentMarker("prod/checkout"))
	w.fake.CommentOnMergeRequest(testProject, iid, "bob", "faked\n\n"+scm.CommentMarker("prod/checkout"))
	c := w.client(t, Options{})
	ctx := testContext(t)
	upsert := func(c *Client, body string, wantPosted bool) {
		t.Helper()
		posted, err := c.UpsertComment(ctx, int(iid), "prod/checkout", body)
		check(t, err)
		if posted != wantPosted {
			t.Fatalf("UpsertComment(%q) posted = %v, want %v", body, posted, wantPosted)
		}
	}
	upsert(c, "step 1/3 paused", true)
	upsert(c, "step 1/3 paused", false)
	upsert(c, "step 2/3 paused", true)
	upsert(w.client(t, Options{}), "step 2/3 paused", false) // restarted: found by its marker

	notes := w.fake.Notes(testProject, iid)
	if len(notes) != 3 {
		t.Fatalf("notes = %+v, want the system note, bob's and sluice-bot's", notes)
	}
	mine := notes[2]
	if mine.Author != "sluice-bot" || mine.Edits != 1 || !strings.HasPrefix(mine.Body, "step 2/3 paused") || !strings.Contains(mine.Body, scm.CommentMarker("prod/checkout")) {
		t.Fatalf("sluice's note = %+v, want sluice-bot's, edited once to step 2", mine)
	}
	if notes[0].Edits != 0 || notes[1].Edits != 0 {
		t.Fatalf("notes = %+v: a note not sluice's was edited", notes)
	}
	if n := w.fake.Count("POST /projects/:id/merge_requests/:iid/notes"); n != 1 {
		t.Fatalf("notes created = %d, want 1", n)
	}
	if n := w.fake.Count("PUT /projects/:id/merge_requests/:iid/notes/:note_id"); n != 1 {
		t.Fatalf("notes edited = %d, want 1", n)
	}
}
