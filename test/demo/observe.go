package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
)

// inflatedMinReadySeconds is the minReadySeconds sluice gives a Deployment
// while it moves a batch (see workload/deployment): new pods become ready
// but never count as available.
const inflatedMinReadySeconds = math.MaxInt32 - 1

// snapshot is what the demo reads from the cluster on each tick.
type snapshot struct {
	// rollout and deployment are nil until they exist.
	rollout    *rolloutsv1beta1.Rollout
	deployment *appsv1.Deployment
	// pods are the Deployment's pods.
	pods []corev1.Pod
}

// observe reads the Rollout and Deployment key and the Deployment's pods.
func observe(ctx context.Context, c client.Reader, key types.NamespacedName) (*snapshot, error) {
	s := &snapshot{}
	ro := &rolloutsv1beta1.Rollout{}
	switch err := c.Get(ctx, key, ro); {
	case err == nil:
		s.rollout = ro
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading rollout %s: %w", key, err)
	}
	d := &appsv1.Deployment{}
	switch err := c.Get(ctx, key, d); {
	case err == nil:
		s.deployment = d
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading deployment %s: %w", key, err)
	}
	if s.deployment != nil && s.deployment.Spec.Selector != nil {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabels(s.deployment.Spec.Selector.MatchLabels)); err != nil {
			return nil, fmt.Errorf("listing pods: %w", err)
		}
		s.pods = pods.Items
	}
	return s, nil
}

// step returns the Rollout's current step and state, or 0 and "".
func (s *snapshot) step() (int32, rolloutsv1beta1.CanaryStepState) {
	if s.rollout == nil {
		return 0, ""
	}
	return s.rollout.Status.CurrentStepIndex, s.rollout.Status.CurrentStepState
}

// canaryRevision returns the revision being (or last) released, or "".
func (s *snapshot) canaryRevision() string {
	if s.rollout == nil || s.rollout.Status.CanaryStatus == nil {
		return ""
	}
	return s.rollout.Status.CanaryStatus.CanaryRevision
}

// revisions counts the pods per image tag, in tag order.
func (s *snapshot) revisions() []revision {
	by := map[string]*revision{}
	for i := range s.pods {
		p := &s.pods[i]
		name := imageTag(p.Spec.Containers[0].Image)
		r := by[name]
		if r == nil {
			r = &revision{Name: name}
			by[name] = r
		}
		switch {
		case p.DeletionTimestamp != nil:
			r.Terminating++
		case podReady(p):
			r.Pods++
			r.Ready++
		default:
			r.Pods++
		}
	}
	out := make([]revision, 0, len(by))
	for _, r := range by {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// frame builds the panel for s.
func (s *snapshot) frame(title string, next []string) frame {
	f := frame{Title: title, Revisions: s.revisions(), Workload: describeDeployment(s.deployment), Next: next}
	if ro := s.rollout; ro != nil {
		f.Phase, f.Message = string(ro.Status.Phase), ro.Status.Message
		f.Step, f.State = ro.Status.CurrentStepIndex, string(ro.Status.CurrentStepState)
		if c := ro.Spec.Strategy.Canary; c != nil {
			f.Steps = int32(len(c.Steps)) //nolint:gosec // at most 50 steps
		}
	}
	return f
}

// describeDeployment says, in one line, what state sluice holds the
// Deployment in.
func describeDeployment(d *appsv1.Deployment) string {
	if d == nil {
		return "not created yet"
	}
	bounds := rollingBounds(d)
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	available := fmt.Sprintf("%d/%d available", d.Status.AvailableReplicas, replicas)
	_, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	inflated := d.Spec.MinReadySeconds == inflatedMinReadySeconds
	switch {
	case held && d.Spec.Paused && inflated:
		return "paused, minReadySeconds inflated: arming the next batch; " + available
	case held && d.Spec.Paused:
		return fmt.Sprintf("paused, %s: held between batches; %s", bounds, available)
	case held:
		return fmt.Sprintf("unpaused, %s, minReadySeconds %d: moving a batch; %s", bounds, d.Spec.MinReadySeconds, available)
	case d.Spec.Paused:
		return "paused by sluice's webhook: a release is starting; " + available
	}
	return fmt.Sprintf("%s, %s: not held; %s", d.Spec.Strategy.Type, bounds, available)
}

// rollingBounds describes the Deployment's maxSurge and maxUnavailable,
// with Kubernetes' defaults where unset.
func rollingBounds(d *appsv1.Deployment) string {
	surge, unavailable := "25%", "25%"
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			surge = ru.MaxSurge.String()
		}
		if ru.MaxUnavailable != nil {
			unavailable = ru.MaxUnavailable.String()
		}
	}
	return fmt.Sprintf("maxSurge %s, maxUnavailable %s", surge, unavailable)
}

// imageTag returns the tag of image, or the image when it has none.
func imageTag(image string) string {
	if i := strings.LastIndex(image, ":"); i >= 0 && !strings.Contains(image[i:], "/") {
		return image[i+1:]
	}
	return image
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// settled reports a Deployment fully available under an idle Rollout that
// has labelled it for sluice's webhook.
func settled(s *snapshot) bool {
	d, ro := s.deployment, s.rollout
	return d != nil && ro != nil && ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy &&
		d.Labels[rolloutsv1beta1.WorkloadTypeLabel] != "" && d.Status.ObservedGeneration >= d.Generation &&
		d.Spec.Replicas != nil && d.Status.AvailableReplicas == *d.Spec.Replicas && d.Status.UpdatedReplicas == *d.Spec.Replicas
}

// pausedAt returns the step the release waits at for an approval, or 0.
func pausedAt(s *snapshot) int32 {
	step, state := s.step()
	if s.rollout == nil || s.rollout.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || state != rolloutsv1beta1.CanaryStepStatePaused {
		return 0
	}
	return step
}

// released reports a completed release of image: the Rollout is Healthy and
// Succeeded, every pod runs image and is ready, and the Deployment is
// handed back.
func released(s *snapshot, image string) bool {
	ro, d := s.rollout, s.deployment
	if ro == nil || d == nil || ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy ||
		ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted || !succeeded(ro) {
		return false
	}
	if _, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; held || d.Spec.Paused {
		return false
	}
	revs := s.revisions()
	return len(revs) == 1 && revs[0].Name == imageTag(image) && d.Spec.Replicas != nil &&
		revs[0].Ready == int(*d.Spec.Replicas) && revs[0].Terminating == 0
}

func succeeded(ro *rolloutsv1beta1.Rollout) bool {
	for _, c := range ro.Status.Conditions {
		if c.Type == rolloutsv1beta1.RolloutConditionSucceeded {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// recorded returns the approval of step of revision in the Rollout's
// record, or nil.
func recorded(s *snapshot, step int32, revision string) *approval.Approval {
	if s.rollout == nil {
		return nil
	}
	records, err := approval.Records(s.rollout.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		return nil
	}
	for i := range records {
		if r := &records[i]; r.Step == step && r.Revision == revision && r.At != nil {
			return r
		}
	}
	return nil
}

// podSummary says how many pods run each revision.
func podSummary(s *snapshot) string {
	out := ""
	for i, r := range s.revisions() {
		if i > 0 {
			out += ", "
		}
		noun := "pods"
		if r.Pods == 1 {
			noun = "pod"
		}
		out += fmt.Sprintf("%d %s on %s", r.Pods, noun, r.Name)
	}
	return out
}
