package view

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload"
)

// Row is one Rollout in the table of `get rollouts`.
type Row struct {
	// Namespace, Name and the other fields are the columns, as printed.
	Namespace, Name, Phase, Step, State, Workload, Revision, Ready, Age, Message string
}

// Columns chooses the optional columns of the table.
type Columns struct {
	// Namespace adds the NAMESPACE column (all namespaces).
	Namespace bool
	// Wide adds the MESSAGE column.
	Wide bool
}

// RowOf is the row of ro. ws is its workload's status, nil when unknown:
// READY is then the Rollout's own count of ready pods on the new revision
// over "-".
func RowOf(ro *rolloutsv1beta1.Rollout, ws *workload.Status, now time.Time) Row {
	r := Row{
		Namespace: ro.Namespace,
		Name:      ro.Name,
		Phase:     orNone(string(ro.Status.Phase)),
		Step:      orNone(progress.AtStep(ro)),
		State:     none,
		Workload:  ro.Spec.WorkloadRef.Kind + "/" + ro.Spec.WorkloadRef.Name,
		Revision:  none,
		Ready:     none,
		Age:       Age(ro.CreationTimestamp.Time, now),
		Message:   orNone(ro.Status.Message),
	}
	p, ok := progress.Of(ro)
	if ok {
		r.State = orNone(string(p.Common.CurrentStepState))
		r.Revision = orNone(p.Revision)
	}
	if ro.Spec.Strategy.Paused && ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing {
		r.State += " (paused)"
	}
	switch {
	case ws != nil:
		r.Ready = fmt.Sprintf("%d/%d", ws.UpdatedReadyReplicas, ws.Replicas)
	case ok:
		r.Ready = fmt.Sprintf("%d/%s", p.UpdatedReady, none)
	}
	return r
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// WriteTable writes rows as the aligned table of `get rollouts`.
func WriteTable(w io.Writer, rows []Row, c Columns) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	header := []string{"NAME", "PHASE", "STEP", "STATE", "WORKLOAD", "REVISION", "READY", "AGE"}
	if c.Namespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	if c.Wide {
		header = append(header, "MESSAGE")
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		cells := []string{r.Name, r.Phase, r.Step, r.State, r.Workload, r.Revision, r.Ready, r.Age}
		if c.Namespace {
			cells = append([]string{r.Namespace}, cells...)
		}
		if c.Wide {
			cells = append(cells, oneLine(r.Message))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// oneLine keeps a message on one table line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
