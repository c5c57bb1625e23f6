package scm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/internal/bounded"
)

// CommentWriter keeps sluice's own comment on a pull request, one per key, edited in place.
type CommentWriter interface {
	// UpsertComment makes body the text of sluice's comment for key on pull (merge) request
	// number: it creates the comment the first time, edits it in place when the text changed,
	// and sends nothing when it did not. The comment is found by a hidden marker naming key
	// (see CommentMarker), among the comments of the user the client authenticates as: a
	// comment by anyone else that carries the marker is never edited. posted tells whether a
	// comment was created or edited.
	UpsertComment(ctx context.Context, number int, key, body string) (posted bool, err error)
}

// MaxCommentLength is the longest comment sluice posts, in characters: GitHub's limit (65536).
// A longer body is cut (an ellipsis line marks the cut), the marker kept.
const MaxCommentLength = 65536

// Comment is a comment on a pull request as a host shows it.
type Comment struct {
	// ID is the host's id of the comment (GitLab: the note's id).
	ID int64
	// Author is the login of who wrote it.
	Author string
	// Body is its text.
	Body string
	// CreatedAt is when it was written; UpdatedAt when it was last edited (CreatedAt when
	// never; the zero time where the host does not say).
	CreatedAt, UpdatedAt time.Time
}

// CommentHost is what a host's client offers StickyComments: who it authenticates as, and the
// comments of a pull request. Each host package implements it in an unexported type.
type CommentHost interface {
	// Self returns the login of the user the client authenticates as (a GitHub App's bot,
	// "<slug>[bot]"), as the host names the authors of comments.
	Self(ctx context.Context) (string, error)
	// Comments lists the comments of pull request number, oldest first (notes written by the
	// host itself, such as GitLab's system notes, left out).
	Comments(ctx context.Context, number int) ([]Comment, error)
	// CreateComment adds a comment to pull request number.
	CreateComment(ctx context.Context, number int, body string) (Comment, error)
	// EditComment replaces the text of comment id of pull request number.
	EditComment(ctx context.Context, number int, id int64, body string) (Comment, error)
}

// commentKeyPattern is what a comment key may be: a Rollout's "namespace/name", or any other
// name made of the characters of Kubernetes names and slashes, which never end an HTML comment.
var commentKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,252}$`)

// CommentMarker is the hidden line that names key in sluice's comment: an HTML comment, which
// GitHub, Gitea and GitLab render as nothing.
func CommentMarker(key string) string {
	return "<!-- sluice:comment " + key + " -->"
}

// ValidateCommentKey checks that key may name a comment (see CommentMarker).
func ValidateCommentKey(key string) error {
	if !commentKeyPattern.MatchString(key) || strings.Contains(key, "--") {
		return fmt.Errorf("comment key %q is not a name of letters, digits, '.', '_', '-' and '/'", key)
	}
	return nil
}

// CommentText is the full text of sluice's comment for key: body, cut to fit
// MaxCommentLength, then the marker on a line of its own.
func CommentText(key, body string) string {
	marker := "\n\n" + CommentMarker(key)
	body = strings.TrimRight(normaliseComment(body), "\n")
	room := MaxCommentLength - utf8.RuneCountInString(marker)
	if utf8.RuneCountInString(body) > room {
		const cut = "\n\n…"
		body = string([]rune(body)[:room-utf8.RuneCountInString(cut)]) + cut
	}
	return body + marker
}

// normaliseComment is a comment's text as compared: the line endings hosts may rewrite made
// "\n", surrounding white space dropped.
func normaliseComment(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// sameComment tells whether two texts of a comment show the same thing.
func sameComment(a, b string) bool { return normaliseComment(a) == normaliseComment(b) }

// StickyComments implements CommentWriter.UpsertComment over a host's CommentHost. It remembers
// the comment it wrote or found for each (pull request, key), at most size of them, so that an
// unchanged text costs no request; for a (pull request, key) it has not seen since it started
// it lists the pull request's comments first. It is safe for concurrent use; calls are
// serialised, so two callers never create the same comment twice.
type StickyComments struct {
	mu    sync.Mutex
	self  string
	known *bounded.Map[stickyKey, Comment]
}

type stickyKey struct {
	number int
	key    string
}

// NewStickyComments returns a StickyComments remembering at most size comments (at least one).
func NewStickyComments(size int) *StickyComments {
	return &StickyComments{known: bounded.New[stickyKey, Comment](size)}
}

// Upsert implements CommentWriter.UpsertComment against host.
func (s *StickyComments) Upsert(ctx context.Context, host CommentHost, number int, key, body string) (bool, error) {
	if number <= 0 {
		return false, fmt.Errorf("pull request number %d is not positive", number)
	}
	if err := ValidateCommentKey(key); err != nil {
		return false, err
	}
	text := CommentText(key, body)
	k := stickyKey{number: number, key: key}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.known.Get(k); ok {
		if sameComment(c.Body, text) {
			return false, nil
		}
		_, err := host.EditComment(ctx, number, c.ID, text)
		switch {
		case err == nil:
			s.known.Put(k, Comment{ID: c.ID, Author: c.Author, Body: text})
			return true, nil
		case IsNotFound(err):
			// Deleted by someone: find it again, or write it anew.
			s.known.Forget(k)
		default:
			s.known.Forget(k)
			return false, err
		}
	}
	c, found, err := s.find(ctx, host, number, key)
	if err != nil {
		return false, err
	}
	if found && sameComment(c.Body, text) {
		s.known.Put(k, c)
		return false, nil
	}
	if found {
		if _, err := host.EditComment(ctx, number, c.ID, text); err != nil {
			return false, err
		}
		s.known.Put(k, Comment{ID: c.ID, Author: c.Author, Body: text})
		return true, nil
	}
	created, err := host.CreateComment(ctx, number, text)
	if err != nil {
		return false, err
	}
	if created.ID == 0 {
		return true, errors.New("the host answered the new comment without its id")
	}
	s.known.Put(k, Comment{ID: created.ID, Author: created.Author, Body: text})
	return true, nil
}

// find returns the oldest comment of the authenticated user on pull request number that
// carries the marker of key.
func (s *StickyComments) find(ctx context.Context, host CommentHost, number int, key string) (Comment, bool, error) {
	if s.self == "" {
		self, err := host.Self(ctx)
		if err != nil {
			return Comment{}, false, fmt.Errorf("reading who the credentials are: %w", err)
		}
		if self == "" {
			return Comment{}, false, errors.New("the host did not say who the credentials are")
		}
		s.self = self
	}
	list, err := host.Comments(ctx, number)
	if err != nil {
		return Comment{}, false, err
	}
	marker := CommentMarker(key)
	for _, c := range list {
		if strings.EqualFold(c.Author, s.self) && strings.Contains(c.Body, marker) {
			return c, true, nil
		}
	}
	return Comment{}, false, nil
}
