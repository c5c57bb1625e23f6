// Package slack posts notifications to a Slack incoming webhook (or any
// chat that accepts its payload: a text, and blocks for Slack itself).
package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/notification/sink"
	"github.com/sluice-dev/sluice/notification/sink/webhook"
)

// Sink posts to one incoming webhook.
type Sink struct {
	// URL is the incoming webhook's address (a secret).
	URL string
	// Client sends the requests.
	Client *http.Client
}

var _ sink.Sink = (*Sink)(nil)

// Payload is what an incoming webhook receives.
type Payload struct {
	// Text is the message, and the notification's fallback.
	Text string `json:"text"`
	// Blocks lay it out in Slack.
	Blocks []Block `json:"blocks,omitempty"`
}

// Block is a Slack layout block.
type Block struct {
	// Type is section or context.
	Type string `json:"type"`
	// Text is a section's text.
	Text *Text `json:"text,omitempty"`
	// Elements are a context's texts.
	Elements []Text `json:"elements,omitempty"`
}

// Text is a Slack text object.
type Text struct {
	// Type is mrkdwn.
	Type string `json:"type"`
	// Text is the text.
	Text string `json:"text"`
}

// Send posts n.
func (s *Sink) Send(ctx context.Context, n notificationv1alpha1.Notification) error {
	body, err := json.Marshal(PayloadOf(n))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("address: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	return webhook.Do(s.Client, req)
}

// PayloadOf lays n out: a headline naming the Rollout and the event, the
// message, and a line with the step, revisions, commit and approvals.
func PayloadOf(n notificationv1alpha1.Notification) Payload {
	head := fmt.Sprintf("%s *%s/%s*: %s", icon(n.Event), n.Namespace, n.Rollout, n.Event)
	var facts []string
	if n.Steps > 0 {
		facts = append(facts, fmt.Sprintf("step %d/%d", n.Step, n.Steps))
	}
	if n.Revision != "" {
		facts = append(facts, "revision `"+n.Revision+"`")
	}
	if n.StableRevision != "" {
		facts = append(facts, "stable `"+n.StableRevision+"`")
	}
	if n.Commit != "" {
		facts = append(facts, "commit `"+commitid.Short(n.Commit)+"`")
	}
	for _, a := range n.Approvals {
		facts = append(facts, fmt.Sprintf("step %d approved by %s", a.Step, a.By))
	}
	line := strings.Join(facts, " · ")
	return Payload{
		Text: head + ": " + n.Message + " (" + line + ")",
		Blocks: []Block{
			{Type: "section", Text: &Text{Type: "mrkdwn", Text: head + "\n" + n.Message}},
			{Type: "context", Elements: []Text{{Type: "mrkdwn", Text: line}}},
		},
	}
}

func icon(e notificationv1alpha1.Event) string {
	switch e {
	case notificationv1alpha1.EventAnalysisFailed, notificationv1alpha1.EventAborted, notificationv1alpha1.EventRolledBack:
		return ":red_circle:"
	case notificationv1alpha1.EventCompleted:
		return ":large_green_circle:"
	case notificationv1alpha1.EventStepPaused:
		return ":double_vertical_bar:"
	}
	return ":large_blue_circle:"
}
