package scm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidateCommentKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"shop/checkout": true, "a": true, "team-a.prod/web_1": true,
		"": false, "shop/checkout -->": false, "a--b": false, "<b>": false, "/leading": false, strings.Repeat("a", 254): false,
	} {
		if err := ValidateCommentKey(key); (err == nil) != ok {
			t.Errorf("ValidateCommentKey(%q) = %v, want ok %v", key, err, ok)
		}
	}
}

// The text of sluice's comment ends with its marker, fits GitHub's limit however long the
// body, and compares equal to what a host hands back with other line endings.
func TestCommentText(t *testing.T) {
	got := CommentText("shop/checkout", "step 1/3 paused\n\n")
	if got != "step 1/3 paused\n\n<!-- sluice:comment shop/checkout -->" {
		t.Fatalf("CommentText = %q", got)
	}
	long := CommentText("shop/checkout", strings.Repeat("é", 2*MaxCommentLength))
	if n := utf8.RuneCountInString(long); n != MaxCommentLength || !strings.HasSuffix(long, CommentMarker("shop/checkout")) || !strings.Contains(long, "…") {
		t.Fatalf("a long body gives %d characters, ending %q", n, long[len(long)-60:])
	}
	if !sameComment(got, strings.ReplaceAll(got, "\n", "\r\n")+"\n") {
		t.Fatal("a host's CRLF line endings read as a change")
	}
}
