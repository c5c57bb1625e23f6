// Package transition says which transitions of a Rollout's release its
// status shows: the release started, a step paused, a step approved, an
// analysis failed, the release rolled back or completed. It is pure: given
// the Rollout (and what the MetricGates and GitGates bound to it know), it
// returns every transition the present state implies, each under a key
// that is the same however often it is computed, so that the notifier
// sends each once by remembering the keys it queued.
package transition

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/progress"
)

// Observed is what the notifier knows of one Rollout.
type Observed struct {
	// Rollout is the Rollout as read.
	Rollout *rolloutsv1beta1.Rollout
	// Commit is the Git commit being released, from a GitGate; empty when
	// none knows it.
	Commit string
	// Failures are the failed analyses of the current release.
	Failures []AnalysisFailure
	// Now is when the Rollout was read.
	Now time.Time
}

// AnalysisFailure is a MetricGate run of the current release that failed.
type AnalysisFailure struct {
	// Gate names the MetricGate.
	Gate string
	// Step is the step analysed (0: background).
	Step int32
	// Message is the run's message.
	Message string
	// Aborts is true when the gate aborts the release on failure.
	Aborts bool
	// Started is when the run started: a release retried after an abort
	// runs its analysis again, and a new failure is a new transition.
	Started time.Time
}

// Implied returns the transitions o's state implies, oldest first.
func Implied(o Observed) []notificationv1alpha1.Notification {
	ro := o.Rollout
	p, ok := progress.Of(ro)
	if !ok {
		return nil
	}
	approvals := approvalsOf(ro, p.Revision)
	base := notificationv1alpha1.Notification{
		Namespace: ro.Namespace, Rollout: ro.Name, Revision: p.Revision, StableRevision: p.Common.StableRevision,
		Step: p.Common.CurrentStepIndex, Steps: progress.Steps(ro), Commit: o.Commit, Time: metav1.NewTime(o.Now),
	}
	for _, a := range approvals {
		base.Approvals = append(base.Approvals, notificationv1alpha1.Approval{Step: a.Step, By: a.By, Via: a.Via})
	}
	release := p.Revision + "/" + p.Common.ObservedRolloutID
	var out []notificationv1alpha1.Notification
	add := func(e notificationv1alpha1.Event, detail, msg string, step int32) {
		n := base
		n.Event, n.Message, n.Step = e, msg, step
		n.Key = Key(ro.Namespace, ro.Name, string(e), release, detail)
		out = append(out, n)
	}
	inRelease := progress.InRelease(ro) && p.Common.StableRevision != "" && p.Revision != p.Common.StableRevision &&
		p.NewPodRevision() != p.Common.StableRevision
	if inRelease {
		add(notificationv1alpha1.EventReleaseStarted, "", fmt.Sprintf("Releasing revision %s in %d steps", p.Revision, base.Steps), base.Step)
	}
	for _, a := range approvals {
		at := ""
		if a.At != nil {
			at = a.At.UTC().Format(time.RFC3339Nano)
		}
		add(notificationv1alpha1.EventApproved, fmt.Sprintf("%d/%s/%s/%s", a.Step, a.By, a.Via, at),
			fmt.Sprintf("Step %d approved by %s via %s", a.Step, a.By, a.Via), a.Step)
	}
	if inRelease && p.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused {
		msg := p.Common.Message
		if msg == "" {
			msg = ro.Status.Message
		}
		if msg == "" {
			msg = fmt.Sprintf("Step %d/%d paused", base.Step, base.Steps)
		}
		add(notificationv1alpha1.EventStepPaused, fmt.Sprint(base.Step), msg, base.Step)
	}
	for _, f := range o.Failures {
		where, step := fmt.Sprintf("step %d", f.Step), f.Step
		if f.Step == 0 {
			where, step = "background", base.Step
		}
		then := "; reported only (onFailure: Report)"
		if f.Aborts {
			then = "; aborting the release"
		}
		detail := fmt.Sprintf("%s/%d", f.Gate, f.Step)
		if !f.Started.IsZero() {
			detail += "/" + f.Started.UTC().Format(time.RFC3339)
		}
		add(notificationv1alpha1.EventAnalysisFailed, detail,
			fmt.Sprintf("MetricGate %s, %s: %s%s", f.Gate, where, f.Message, then), step)
	}
	if ab, ok := progress.AbortOf(ro); ok {
		at := ""
		if ab.At != nil {
			at = ab.At.UTC().Format(time.RFC3339Nano)
		}
		why := ""
		if ab.Reason != "" {
			why = " (" + ab.Reason + ")"
		}
		n := len(out)
		add(notificationv1alpha1.EventAborted, ab.Revision+"/"+at,
			fmt.Sprintf("Release of revision %s aborted by %s at step %d/%d%s: every pod and all traffic back on revision %s",
				ab.Revision, ab.Who(), ab.Step, base.Steps, why, ab.StableRevision), ab.Step)
		if ab.Revision != "" {
			out[n].Revision = ab.Revision
		}
	}
	if c := progress.Condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c != nil {
		// The condition is removed when a release starts: one present
		// tells how the last release ended. Its transition time tells
		// this end from an earlier one.
		at := c.LastTransitionTime.UTC().Format(time.RFC3339)
		switch {
		case c.Status == "True":
			add(notificationv1alpha1.EventCompleted, at, c.Message, base.Step)
		case c.Reason == "RolledBack":
			add(notificationv1alpha1.EventRolledBack, at, c.Message, base.Step)
		}
	}
	return out
}

// approvalsOf returns the approvals sluice applied to revision (the
// record in sluice.dev/approvals), oldest first.
func approvalsOf(ro *rolloutsv1beta1.Rollout, revision string) []approval.Approval {
	records, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil || revision == "" {
		return nil
	}
	var out []approval.Approval
	for _, a := range records {
		if a.Revision == revision {
			out = append(out, a)
		}
	}
	return out
}

// Key is the stable key of a transition: a digest of what identifies it.
func Key(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:12])
}
