package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/sluice-dev/sluice/test/githubfake"
)

// trackedCommit is a commit whose statuses the story shows.
type trackedCommit struct {
	sha string
	// name says which commit it is ("PR #1", "revert").
	name string
}

// postedStatus is a commit status as it appeared on GitHub.
type postedStatus struct {
	commit trackedCommit
	githubfake.Status
}

// statusWatch reports the statuses posted on the tracked commits, each
// once, in the order GitHub received them.
type statusWatch struct {
	gh   *githubfake.Server
	repo string

	mu      sync.Mutex
	commits []trackedCommit
	seen    map[string]int // sha -> statuses already reported
}

// track adds a commit to watch.
func (w *statusWatch) track(sha, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.commits = append(w.commits, trackedCommit{sha: sha, name: name})
}

// poll returns the statuses posted since the last poll.
func (w *statusWatch) poll() []postedStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]int{}
	}
	var out []postedStatus
	for _, c := range w.commits {
		list := w.gh.Statuses(w.repo, c.sha) // newest first
		for i := len(list) - 1 - w.seen[c.sha]; i >= 0; i-- {
			out = append(out, postedStatus{commit: c, Status: list[i]})
		}
		w.seen[c.sha] = len(list)
	}
	return out
}

// latest returns the newest status of each tracked commit that has one,
// in tracking order.
func (w *statusWatch) latest() []postedStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []postedStatus
	for _, c := range w.commits {
		if list := w.gh.Statuses(w.repo, c.sha); len(list) > 0 {
			out = append(out, postedStatus{commit: c, Status: list[0]})
		}
	}
	return out
}

// newest returns the newest status of sha, zero when it has none.
func (w *statusWatch) newest(sha string) githubfake.Status {
	if list := w.gh.Statuses(w.repo, sha); len(list) > 0 {
		return list[0]
	}
	return githubfake.Status{}
}

// statusIcon is how GitHub marks a status's state.
func statusIcon(state string) string {
	switch state {
	case "success":
		return "✓"
	case "pending":
		return "●"
	default: // failure, error
		return "✗"
	}
}

// checkLine shows a status as GitHub's list of checks does:
// "✓ sluice/demo/checkout — released: 3/3 steps done".
func checkLine(s githubfake.Status) string {
	return fmt.Sprintf("%s %-7s %s — %s", statusIcon(s.State), s.State, s.Context, s.Description)
}

// describe names the commit: "1a2b3c4 (PR #1)".
func (c trackedCommit) describe() string {
	return fmt.Sprintf("%s (%s)", short(c.sha), c.name)
}

// short abbreviates a commit SHA as GitHub shows it.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// labelRequest adds label to pull request number as the holder of token,
// through GitHub's REST API (POST /repos/{owner}/{repo}/issues/{n}/labels),
// as the curl command the story shows does.
func labelRequest(ctx context.Context, apiURL, repo, token string, number int, label string) error {
	url := fmt.Sprintf("%srepos/%s/issues/%d/labels", apiURL, repo, number)
	body, _ := json.Marshal(map[string][]string{"labels": {label}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("adding the label %s: %w", label, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("adding the label %s: GitHub answered %s: %s", label, resp.Status, strings.TrimSpace(string(answer)))
	}
	return nil
}
