package view

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	eventsv1 "k8s.io/api/events/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/observability/eventtime"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload/revisions"
)

// The kinds of history items, in the order items of the same time show.
const (
	// ItemRevision is a revision the workload keeps.
	ItemRevision = "revision"
	// ItemEvent is an event of the Rollout.
	ItemEvent = "event"
	// ItemApproval is an approval sluice applied.
	ItemApproval = "approval"
)

// Item is one line of `history`.
type Item struct {
	// At is when it happened.
	At time.Time
	// Kind is ItemRevision, ItemEvent or ItemApproval.
	Kind string
	// Text describes it.
	Text string
}

// HistoryOf gathers the history of ro: the workload's revisions (revs),
// the Rollout's events (approvals excepted: the record has them, and
// outlives events) and its record of approvals; oldest first.
func HistoryOf(ro *rolloutsv1beta1.Rollout, revs []revisions.Revision, events []eventsv1.Event) []Item {
	var items []Item
	p, _ := progress.Of(ro)
	for _, r := range revs {
		text := fmt.Sprintf("%s %s #%d %s", r.Kind, r.Name, r.Number, revisions.Images(r.Template))
		if rl := p.RoleOf(r.Matches); rl != "other" {
			text += " (" + rl + ")"
		}
		items = append(items, Item{At: r.Created, Kind: ItemRevision, Text: text})
	}
	for i := range events {
		e := &events[i]
		if e.Reason == "Approved" {
			continue
		}
		text := fmt.Sprintf("%s %s: %s", e.Type, e.Reason, oneLine(e.Note))
		if n := eventtime.Count(e); n > 1 {
			text += fmt.Sprintf(" (x%d, last %s)", n, Timestamp(eventtime.Last(e)))
		}
		items = append(items, Item{At: eventtime.First(e), Kind: ItemEvent, Text: text})
	}
	records, _ := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	for _, a := range records {
		var at time.Time
		if a.At != nil {
			at = *a.At
		}
		text := fmt.Sprintf("step %d of revision %s approved by %s via %s", a.Step, orNone(a.Revision), orNone(a.By), orNone(a.Via))
		switch a.Action {
		case approval.ActionAbort:
			text = fmt.Sprintf("revision %s aborted at step %d by %s via %s", orNone(a.Revision), a.Step, orNone(a.By), orNone(a.Via))
		case approval.ActionRetry:
			text = fmt.Sprintf("revision %s retried from step 1 by %s via %s", orNone(a.Revision), orNone(a.By), orNone(a.Via))
		}
		items = append(items, Item{At: at, Kind: ItemApproval, Text: text})
	}
	rank := map[string]int{ItemRevision: 0, ItemEvent: 1, ItemApproval: 2}
	sort.SliceStable(items, func(i, j int) bool {
		if !items[i].At.Equal(items[j].At) {
			return items[i].At.Before(items[j].At)
		}
		return rank[items[i].Kind] < rank[items[j].Kind]
	})
	return items
}

// WriteHistory writes items one line each: time, kind, text.
func WriteHistory(w io.Writer, items []Item) error {
	if len(items) == 0 {
		_, err := fmt.Fprintln(w, "No history: no revisions, events or approvals found")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tKIND\tWHAT")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", Timestamp(it.At), it.Kind, it.Text)
	}
	return tw.Flush()
}
