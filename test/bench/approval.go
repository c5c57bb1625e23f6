package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// approvalResult is what the approval scenario measured: N Rollouts paused
// at step 1, every one approved at once, half through a status patch (as
// kubectl-kruise rollout approve does) and half through the
// sluice.dev/approve annotation (as kubectl sluice approve, or Git, does).
// The GitHub label webhook path is the gitops scenario's.
type approvalResult struct {
	Rollouts int `json:"rollouts"`
	// StatusPatch and Annotation are the seconds, per approved Rollout,
	// from the approval's write to the next batch's first write to its
	// workload.
	StatusPatch []float64 `json:"statusPatch"`
	Annotation  []float64 `json:"annotation"`
	// Writes and Reads are the manager's API requests from the first
	// approval until every next batch was written.
	Writes, Reads         int
	WriteKinds, ReadKinds []count
	// CPUSeconds is the process's CPU in that period; PeakRSS the kernel's
	// high-water mark of its resident set, setup included.
	CPUSeconds float64 `json:"cpuSeconds"`
	PeakRSS    uint64  `json:"peakRssBytes"`
	// Process says whose CPU and memory these are.
	Process string `json:"process"`
}

// approvalGoal is issue 15's target for the approval latency (p99).
const approvalGoal = 200 * time.Millisecond

// measureApproval releases the new image to every Deployment, waits until
// every Rollout is paused at step 1, then approves them all at once and
// measures each approval's delay to the next batch's first workload write,
// waiting at most timeout for them. approver sends the approvals, without
// a client-side rate limit.
func measureApproval(ctx context.Context, s *scenario, approver client.Client, side managerSide, timeout time.Duration) (*approvalResult, error) {
	_, revisions, err := s.changeImages(ctx)
	if err != nil {
		return nil, err
	}
	s.logf("waiting for %d rollouts paused at step 1", s.n)
	err = s.poll(ctx, "rollouts paused at step 1", func(ctx context.Context, ns string) (bool, string, error) {
		ro := &rolloutsv1beta1.Rollout{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: appName}, ro); err != nil {
			return false, "", err
		}
		cs := ro.Status.CanaryStatus
		return cs != nil && cs.CurrentStepIndex == 1 && cs.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused, describeRollout(ro), nil
	})
	if err != nil {
		return nil, err
	}
	ws := newWriteWatch(s.c, "")
	stop, err := ws.start(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	afterSecond(ctx, time.Now())
	s.logf("approving %d rollouts at once", s.n)
	cpu := side.cpuSeconds()
	side.openWindow()
	approved := make([]time.Time, s.n)
	errs := make([]error, s.n)
	var wg sync.WaitGroup
	for i, ns := range s.namespaces() {
		wg.Go(func() { approved[i], errs[i] = approve(ctx, approver, ns, i%2 == 0, revisions[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	res := &approvalResult{Rollouts: s.n, Process: side.process()}
	missing := 0
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		res.StatusPatch, res.Annotation, missing = nil, nil, 0
		for i, ns := range s.namespaces() {
			at, ok := ws.firstAfter(ns+"/"+appName, approved[i])
			switch {
			case !ok:
				missing++
			case i%2 == 0:
				res.StatusPatch = append(res.StatusPatch, at.Sub(approved[i]).Seconds())
			default:
				res.Annotation = append(res.Annotation, at.Sub(approved[i]).Seconds())
			}
		}
		return missing == 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the next batches: %w (%d of %d never written)", err, missing, s.n)
	}
	counts := side.snapshot()
	res.CPUSeconds, res.PeakRSS = round3(side.cpuSeconds()-cpu), side.peakRSS()
	res.WriteKinds, res.Writes = tally(counts, writeKind)
	res.ReadKinds, res.Reads = tally(counts, readKind)
	return res, nil
}

// approve approves step 1 of the Rollout in ns, through its status (the
// way OpenKruise's kubectl plugin does) or through sluice.dev/approve
// naming revision, and returns when the write was sent.
func approve(ctx context.Context, c client.Client, ns string, viaStatus bool, revision string) (time.Time, error) {
	ro := &rolloutsv1beta1.Rollout{}
	ro.Namespace, ro.Name = ns, appName
	at := time.Now()
	if viaStatus {
		patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
		return at, c.Status().Patch(ctx, ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise"))
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, rolloutsv1beta1.ApproveAnnotation, "step=1,revision="+revision)
	return at, c.Patch(ctx, ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-sluice"))
}

// printApproval writes r for a person to read.
func printApproval(w io.Writer, r *approvalResult) {
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format+"\n", args...) }
	p("sluice benchmark, approval: %d Rollouts paused at step 1, all approved at once", r.Rollouts)
	for _, l := range []struct {
		what string
		v    []float64
	}{{"status patch -> next batch written", r.StatusPatch}, {"annotation -> next batch written", r.Annotation}} {
		v := sortedCopy(l.v)
		p99 := percentile(v, 99)
		verdict := "goal met"
		if p99 >= approvalGoal.Seconds() {
			verdict = "goal missed"
		}
		p("  %-36s n=%d  p50 %6.3fs  p99 %6.3fs  max %6.3fs  (goal p99 < %s: %s)", l.what, len(v), percentile(v, 50), p99, percentile(v, 100), approvalGoal, verdict)
	}
	p("  manager's API requests until every next batch was written: %d writes (%.1f per Rollout), %d reads (%.1f per Rollout)",
		r.Writes, float64(r.Writes)/float64(max(r.Rollouts, 1)), r.Reads, float64(r.Reads)/float64(max(r.Rollouts, 1)))
	printCounts(w, r.WriteKinds, float64(r.Rollouts))
	printCounts(w, r.ReadKinds, float64(r.Rollouts))
	p("  CPU %.1fs; resident set high-water mark %s (setup included), of %s", r.CPUSeconds, mib(r.PeakRSS), r.Process)
}
