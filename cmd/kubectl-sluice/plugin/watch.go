package plugin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/internal/view"
)

// Timing of the watch.
const (
	// minRedraw spaces redraws, so a burst of changes draws once.
	minRedraw = 200 * time.Millisecond
	// refresh redraws a terminal page even without changes, for its ages.
	refresh = 5 * time.Second
	// rewatch is how long to wait before watching again after a watch
	// failed or ended.
	rewatch = time.Second
)

// clearScreen moves the cursor home and clears the terminal.
const clearScreen = "\x1b[H\x1b[2J"

// watchStatus draws the status of the Rollout name on every change until
// ctx ends: in place when out is a terminal, appending the pages that
// differ otherwise.
func watchStatus(ctx context.Context, s *session, name string, out io.Writer) error {
	snap, err := s.snapshot(ctx, name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := make(chan struct{}, 1)
	ro := snap.Rollout
	byName := client.MatchingFields{"metadata.name": ro.Name}
	go s.watchChanges(ctx, &rolloutsv1beta1.RolloutList{}, changed, client.InNamespace(ro.Namespace), byName)
	go s.watchChanges(ctx, &rolloutsv1beta1.BatchReleaseList{}, changed, client.InNamespace(ro.Namespace), byName)
	go s.watchChanges(ctx, &eventsv1.EventList{}, changed, client.InNamespace(ro.Namespace),
		client.MatchingFields{"regarding.kind": "Rollout", "regarding.name": ro.Name})
	if ws := snap.Workload; ws != nil && ws.PodSelector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(ws.PodSelector); err == nil {
			go s.watchChanges(ctx, &corev1.PodList{}, changed, client.InNamespace(ro.Namespace), client.MatchingLabelsSelector{Selector: sel})
		}
	}

	live := isTerminal(out)
	var tick <-chan time.Time
	if live {
		t := time.NewTicker(refresh)
		defer t.Stop()
		tick = t.C
	}
	var last []byte
	for {
		page := &bytes.Buffer{}
		if err := view.Status(page, snap); err != nil {
			return err
		}
		switch {
		case live:
			fmt.Fprintf(out, "%s%s\nWatching rollout %s/%s; Ctrl-C to stop\n", clearScreen, page, ro.Namespace, ro.Name)
		case !bytes.Equal(page.Bytes(), last):
			fmt.Fprintf(out, "---- %s\n%s", snap.Now.Format(time.RFC3339), page)
		}
		last = page.Bytes()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-tick:
		}
		select { // let a burst of changes settle
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(minRedraw):
		}
		next, err := s.snapshot(ctx, name)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		}
		snap = next
	}
}

// watchChanges signals changed on every change of the objects list
// selects, watching again whenever a watch ends, until ctx ends.
func (s *session) watchChanges(ctx context.Context, list client.ObjectList, changed chan<- struct{}, opts ...client.ListOption) {
	for ctx.Err() == nil {
		w, err := s.c.Watch(ctx, list, opts...)
		if err == nil {
			for range w.ResultChan() {
				select {
				case changed <- struct{}{}:
				default: // a redraw is already due
				}
			}
			w.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(rewatch):
		}
	}
}

// isTerminal reports whether out is a terminal that can be redrawn in
// place.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
