package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/dump"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Names and images of the scenario's objects.
const (
	appName    = "web"
	benchLabel = "sluice.dev/bench" // on namespaces and Rollouts; the value is the run id
	imageOld   = "registry.example/bench/web:v1"
	imageNew   = "registry.example/bench/web:v2"
	setupLimit = 5 * time.Minute
)

// scenario is one benchmark run: n Deployments of replicas pods, each with
// its own Rollout in its own namespace.
type scenario struct {
	c        client.WithWatch
	runID    string
	n        int
	replicas int32
	progress io.Writer
	// approval makes step 1 of each Rollout wait for an approval (the
	// approval scenario); otherwise every pause lasts 0 seconds.
	approval bool
}

// namespace is the namespace of the i-th Deployment and Rollout.
func (s *scenario) namespace(i int) string { return fmt.Sprintf("bench-%s-%02d", s.runID, i) }

// namespaces lists the scenario's namespaces in order.
func (s *scenario) namespaces() []string {
	out := make([]string, s.n)
	for i := range out {
		out[i] = s.namespace(i)
	}
	return out
}

func (s *scenario) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(s.progress, "bench: "+format+"\n", args...)
}

// setup creates the namespaces, the Deployments and the Rollouts, and waits
// until every Deployment is available and every Rollout reports a completed
// release of the Deployment's current revision.
func (s *scenario) setup(ctx context.Context) error {
	for _, ns := range s.namespaces() {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{benchLabel: s.runID}}}
		if err := s.c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	err := s.poll(ctx, "default ServiceAccounts", func(ctx context.Context, ns string) (bool, string, error) {
		err := s.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		return err
	}
	for _, ns := range s.namespaces() {
		if err := s.c.Create(ctx, newDeployment(ns, s.replicas)); err != nil {
			return fmt.Errorf("creating deployment in %s: %w", ns, err)
		}
	}
	if err := s.waitDeployments(ctx, imageOld); err != nil {
		return err
	}
	s.logf("%d deployments available; creating rollouts", s.n)
	for _, ns := range s.namespaces() {
		if err := s.c.Create(ctx, newRollout(ns, s.runID, s.approval)); err != nil {
			return fmt.Errorf("creating rollout in %s: %w", ns, err)
		}
	}
	return s.poll(ctx, "rollouts healthy", func(ctx context.Context, ns string) (bool, string, error) {
		ro, d := &rolloutsv1beta1.Rollout{}, &appsv1.Deployment{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: appName}, ro); err != nil {
			return false, "", err
		}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: appName}, d); err != nil {
			return false, "", err
		}
		rev := templateRevision(&d.Spec.Template)
		if cs := ro.Status.CanaryStatus; completed(ro, "") && cs.CanaryRevision != rev {
			return false, "", fmt.Errorf("rollout %s/%s completed revision %q, but the Deployment's template hashes to %q: the benchmark cannot recognise releases",
				ns, appName, cs.CanaryRevision, rev)
		}
		return completed(ro, rev), describeRollout(ro), nil
	})
}

// poll checks cond for every namespace every 200ms until it holds for all,
// or fails with the last description of a namespace where it did not.
func (s *scenario) poll(ctx context.Context, what string, cond func(ctx context.Context, ns string) (bool, string, error)) error {
	var last string
	// A thousand Deployments of ten pods take minutes to become available
	// on two cores: the limit grows with the scenario.
	limit := setupLimit + time.Duration(s.n)*time.Second
	err := wait.PollUntilContextTimeout(ctx, time.Second, limit, true, func(ctx context.Context) (bool, error) {
		for _, ns := range s.namespaces() {
			ok, desc, err := cond(ctx, ns)
			if err != nil || !ok {
				last = ns + ": " + desc
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w; last seen %s", what, err, last)
	}
	return nil
}

// waitDeployments waits until every Deployment runs image on all its pods
// and Kubernetes reports them available.
func (s *scenario) waitDeployments(ctx context.Context, image string) error {
	return s.poll(ctx, "deployments on "+image, func(ctx context.Context, ns string) (bool, string, error) {
		d := &appsv1.Deployment{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: appName}, d); err != nil {
			return false, "", err
		}
		n := *d.Spec.Replicas
		st := d.Status
		ok := d.Spec.Template.Spec.Containers[0].Image == image && !d.Spec.Paused && st.ObservedGeneration >= d.Generation &&
			st.Replicas == n && st.UpdatedReplicas == n && st.AvailableReplicas == n && st.ReadyReplicas == n
		return ok, fmt.Sprintf("paused=%v status=%+v", d.Spec.Paused, st), nil
	})
}

// changeImages sets the new image on every Deployment at once, as kubectl
// set image does, and returns when each change was sent and the revision
// each Deployment's new template hashes to.
func (s *scenario) changeImages(ctx context.Context) (at []time.Time, revisions []string, err error) {
	at, revisions = make([]time.Time, s.n), make([]string, s.n)
	errs := make([]error, s.n)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, imageNew)
	var wg sync.WaitGroup
	for i, ns := range s.namespaces() {
		wg.Go(func() {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: appName}}
			at[i] = time.Now()
			errs[i] = s.c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("kubectl"))
			revisions[i] = templateRevision(&d.Spec.Template)
		})
	}
	wg.Wait()
	return at, revisions, errors.Join(errs...)
}

// completed reports whether ro has finished the release of revision
// (any revision when it is empty): phase Healthy and the canary status's
// step state Completed.
func completed(ro *rolloutsv1beta1.Rollout, revision string) bool {
	cs := ro.Status.CanaryStatus
	return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && cs != nil &&
		cs.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted &&
		(revision == "" || cs.CanaryRevision == revision)
}

// describeRollout summarises what a Rollout is doing, for timelines and
// timeout messages.
func describeRollout(ro *rolloutsv1beta1.Rollout) string {
	if ro == nil {
		return "not seen"
	}
	out := fmt.Sprintf("phase=%s", ro.Status.Phase)
	if cs := ro.Status.CanaryStatus; cs != nil {
		out += fmt.Sprintf(" step=%d state=%s canary=%d/%d revision=%s", cs.CurrentStepIndex, cs.CurrentStepState,
			cs.CanaryReadyReplicas, cs.CanaryReplicas, cs.CanaryRevision)
	}
	return out
}

// templateRevision is the pod-template-hash Kubernetes' Deployment
// controller computes for a template with no collisions: FNV-32a of the
// template's hash dump, in the safe alphabet. It names the revision a
// Rollout releases.
func templateRevision(t *corev1.PodTemplateSpec) string {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", dump.ForHash(*t))
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// newDeployment is the scenario's Deployment in ns.
func newDeployment(ns string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": appName}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: appName},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: imageOld}}},
			},
		},
	}
}

// newRollout is the scenario's Rollout in ns: steps of 1 pod, 50% and
// 100%, each with a zero-duration pause, except step 1 when approval is
// set: it waits for an approval.
func newRollout(ns, runID string, approval bool) *rolloutsv1beta1.Rollout {
	var steps []rolloutsv1beta1.CanaryStep
	for i, r := range []string{"1", "50%", "100%"} {
		replicas := intstr.Parse(r)
		zero := int32(0)
		step := rolloutsv1beta1.CanaryStep{Replicas: &replicas, Pause: rolloutsv1beta1.RolloutPause{Duration: &zero}}
		if approval && i == 0 {
			step.Pause = rolloutsv1beta1.RolloutPause{}
		}
		steps = append(steps, step)
	}
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: appName, Labels: map[string]string{benchLabel: runID}},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: appName},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: steps}},
		},
	}
}
