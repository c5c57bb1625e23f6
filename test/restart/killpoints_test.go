package restart

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/release/approval"
)

// killer runs one sluice process for a release and kills it at kill
// points.
type killer struct {
	t    *testing.T
	name string
	ns   string
	s    *sluice
	// killed lists the kill points sluice was killed at, in order.
	killed []killpoint.Point
}

// newKiller starts sluice; set ns before the first kill.
func newKiller(t *testing.T, name string) *killer {
	t.Helper()
	t.Cleanup(func() { deleteWebhooks(t, name) }) // runs after the last kill
	return &killer{t: t, name: name, s: startSluice(t, name)}
}

// through starts sluice blocking at every one of points, runs trigger, and
// each time sluice blocks at some of them kills it (SIGKILL) and starts it
// again blocking at those not reached yet, until every point was reached
// once; then sluice runs without kill points. The order the points are
// reached in does not matter (the Rollout and BatchRelease controllers run
// side by side); a point never reached fails the test.
func (k *killer) through(trigger func(), points ...killpoint.Point) {
	k.t.Helper()
	k.s.Kill(k.t)
	remaining := slices.Clone(points)
	k.s = startSluiceAt(k.t, k.name, k.ns, remaining)
	if trigger != nil {
		trigger()
	}
	for len(remaining) > 0 {
		reached := k.s.reached(k.t)
		k.s.Kill(k.t)
		k.t.Logf("killed sluice at %v", reached)
		k.killed = append(k.killed, reached...)
		remaining = slices.DeleteFunc(remaining, func(p killpoint.Point) bool { return slices.Contains(reached, p) })
		k.s = startSluiceAt(k.t, k.name, k.ns, remaining)
	}
}

// records is what the Rollout keeps of its release: the approvals it
// applied (annotation sluice.dev/approvals) and the steps it paused at (its
// StepPaused events, each repeat counted).
type records struct {
	approved []int32
	paused   map[string]int32
}

func (r *release) records() records {
	r.t.Helper()
	ro := r.rollout()
	out := records{paused: map[string]int32{}}
	list, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		r.t.Fatalf("annotation %s: %v", rolloutsv1beta1.ApprovalsAnnotation, err)
	}
	for _, a := range list {
		if a.Action == "" {
			out.approved = append(out.approved, a.Step)
		}
	}
	events := &eventsv1.EventList{}
	if err := suite.c.List(ctxFor(r.t), events, client.InNamespace(r.ns)); err != nil {
		r.t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Regarding.Kind != "Rollout" || e.Regarding.Name != "web" || e.Reason != "StepPaused" {
			continue
		}
		n := int32(1)
		if e.Series != nil {
			n = e.Series.Count
		}
		out.paused[e.Note] += n
	}
	return out
}

// judge fails the test unless the Rollout's records show each step in
// pausedSteps paused exactly once and approved exactly once, in order.
func (r *release) judge(pausedSteps ...int32) {
	r.t.Helper()
	var rec records
	eventually(r.t, "the Rollout's records of the release", func() (bool, string) {
		rec = r.records()
		total := int32(0)
		for _, n := range rec.paused {
			total += n
		}
		return len(rec.approved) >= len(pausedSteps) && int(total) >= len(pausedSteps),
			fmt.Sprintf("approved %v paused %v", rec.approved, rec.paused)
	})
	if !slices.Equal(rec.approved, pausedSteps) {
		r.t.Errorf("approvals recorded for steps %v, want %v once each (none lost or applied twice)", rec.approved, pausedSteps)
	}
	notes := slices.Sorted(maps.Keys(rec.paused))
	var steps []string
	for _, n := range notes {
		if rec.paused[n] != 1 {
			r.t.Errorf("StepPaused %q recorded %d times, want once (a step paused twice)", n, rec.paused[n])
		}
		steps = append(steps, n)
	}
	if len(notes) != len(pausedSteps) {
		r.t.Errorf("steps paused %q, want steps %v once each", steps, pausedSteps)
	}
	for _, s := range pausedSteps {
		want := fmt.Sprintf("Step %d/", s)
		if !strings.Contains(strings.Join(notes, "|"), want) {
			r.t.Errorf("no StepPaused event names step %s (got %q)", want, steps)
		}
	}
}

// expectPods fails the test unless the pods run want (image: count).
func (r *release) expectPods(when string, want map[string]int) {
	r.t.Helper()
	if got := r.pods(); !maps.Equal(got, want) {
		r.t.Fatalf("%s: pods by image %v, want %v (exactly the planned pods)", when, got, want)
	}
}

// Given a Deployment of 10 pods with steps 1 / 50% / 100%
// When sluice is SIGKILLed right after claiming the Deployment, right
// after each Arm write and each Move write of every batch, and right after
// the finalizer's work on deleting the Rollout, and started again each time
// Then each step places exactly its planned pods, the Rollout records each
// pause and approval once, the Deployment completes, and the deleted
// Rollout goes leaving the Deployment finished by Kubernetes.
func TestRestart_deployment_killedAtEveryKillPoint(t *testing.T) {
	k := newKiller(t, "sluice-kp-deploy")
	r := newRelease(t, 10, "1", "50%", "100%")
	k.ns = r.ns

	k.through(func() { r.setImage("web:v1") }, killpoint.BatchReleaseClaimed, killpoint.DeploymentArmed, killpoint.DeploymentMoved)
	r.waitPaused(1)
	r.expectPods("step 1", map[string]int{"web:v1": 1, "web:v0": 9})

	k.through(r.approve, killpoint.DeploymentArmed, killpoint.DeploymentMoved)
	r.waitPaused(2)
	r.expectPods("step 2", map[string]int{"web:v1": 5, "web:v0": 5})

	k.through(r.approve, killpoint.DeploymentArmed, killpoint.DeploymentMoved)
	r.waitCompleted("web:v1")
	r.judge(1, 2)

	// Deleting the Rollout mid-release.
	r.setImage("web:v2")
	r.waitPaused(1)
	k.through(func() {
		if err := suite.c.Delete(ctxFor(t), r.rollout()); err != nil {
			t.Fatal(err)
		}
	}, killpoint.RolloutFinalizerRemoving)
	eventually(t, "the Rollout gone", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: r.ns, Name: "web"}, &rolloutsv1beta1.Rollout{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	r.waitComplete("web:v2")
	t.Logf("killed at %v", k.killed)
}

// Given a Deployment of 4 pods with steps 1 / 50% / 100%, paused at step 1
// When sluice is SIGKILLed right after recording each approval in the
// Rollout's sluice.dev/approvals annotation (before the status moves the
// step on), and started again
// Then each approval is recorded once, and each step places exactly its
// planned pods.
func TestRestart_killedAfterRecordingAnApproval_recordsItOnce(t *testing.T) {
	k := newKiller(t, "sluice-kp-approval")
	r := newRelease(t, 4, "1", "50%", "100%")
	k.ns = r.ns
	r.setImage("web:v1")
	r.waitPaused(1)
	r.expectPods("step 1", map[string]int{"web:v1": 1, "web:v0": 3})
	k.through(r.approve, killpoint.RolloutApprovalRecorded)
	r.waitPaused(2)
	r.expectPods("step 2", map[string]int{"web:v1": 2, "web:v0": 2})
	k.through(r.approve, killpoint.RolloutApprovalRecorded)
	r.waitCompleted("web:v1")
	r.judge(1, 2)
}

// Given a Deployment of 4 pods behind a Service and an HTTPRoute, with
// steps 1 / 50% / 100% giving the new pods 10% / 50% / 100% of the traffic
// When sluice is SIGKILLed right after claiming the Deployment, after every
// traffic change (each starting a grace period the status does not record
// yet), and after each Arm and Move write, and started again each time
// Then each step has exactly its planned pods and weights, the Rollout
// records each pause and approval once, and at the end the route and the
// Service are as before with every pod on the new revision.
func TestRestart_deploymentWithTraffic_killedAtEveryKillPoint(t *testing.T) {
	k := newKiller(t, "sluice-kp-traffic")
	r := newTrafficRelease(t, 4, []string{"1", "50%", "100%"}, []string{"10%", "50%", "100%"})
	k.ns = r.ns
	route, selector := r.routeWeights(), r.serviceSelector()

	k.through(func() { r.setImage("web:v1") },
		killpoint.BatchReleaseClaimed, killpoint.TrafficChanged, killpoint.DeploymentArmed, killpoint.DeploymentMoved)
	r.waitPaused(1)
	r.expectPods("step 1", map[string]int{"web:v1": 1, "web:v0": 3})
	if got := r.routeWeights(); got != "web:90,web-canary:10" {
		t.Fatalf("step 1 route %s, want web:90,web-canary:10", got)
	}

	k.through(r.approve, killpoint.DeploymentArmed, killpoint.DeploymentMoved, killpoint.TrafficChanged)
	r.waitPaused(2)
	r.expectPods("step 2", map[string]int{"web:v1": 2, "web:v0": 2})
	if got := r.routeWeights(); got != "web:50,web-canary:50" {
		t.Fatalf("step 2 route %s, want web:50,web-canary:50", got)
	}

	k.through(r.approve, killpoint.DeploymentArmed, killpoint.DeploymentMoved, killpoint.TrafficChanged)
	r.waitCompleted("web:v1")
	eventually(t, "route and Service given back", func() (bool, string) {
		got, sel := r.routeWeights(), r.serviceSelector()
		return got == route && maps.Equal(sel, selector), fmt.Sprintf("route %s selector %v", got, sel)
	})
	r.judge(1, 2)
	t.Logf("killed at %v", k.killed)
}

// Given a StatefulSet of 6 pods with steps 1 / 50% / 100%
// When sluice is SIGKILLed right after claiming it and right after each
// write lowering its partition, and started again each time
// Then each step has exactly its planned pods, the Rollout records each
// pause and approval once, and the StatefulSet completes with partition 0.
func TestRestart_statefulSet_killedAtEveryKillPoint(t *testing.T) {
	k := newKiller(t, "sluice-kp-sts")
	r := newStatefulSetRelease(t, 6, "1", "50%", "100%")
	k.ns = r.ns

	k.through(func() { r.setImage("web:v1") }, killpoint.BatchReleaseClaimed, killpoint.PartitionLowered)
	r.waitPaused(1)
	r.expectPods("step 1", map[string]int{"web:v1": 1, "web:v0": 5})

	k.through(r.approve, killpoint.PartitionLowered)
	r.waitPaused(2)
	r.expectPods("step 2", map[string]int{"web:v1": 3, "web:v0": 3})

	k.through(r.approve, killpoint.PartitionLowered)
	r.waitCompleted("web:v1")
	r.judge(1, 2)
	t.Logf("killed at %v", k.killed)
}
