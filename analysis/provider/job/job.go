// Package job measures a metric by running a Job made from the metric's
// template in the Rollout's namespace: the measurement is true when the Job
// completes and false when it fails.
//
// Each measurement has its own Job, named after the measurement's key, so
// asking again for the same measurement (after a restart, or while the Job
// runs) finds the same Job instead of starting another. Jobs are owned by
// the MetricGate, labelled with what they measure, and the Jobs of a
// metric's earlier measurements, and of its earlier runs, are deleted once
// a later one starts.
package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/analysis/provider"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

// Labels of the Jobs a metric runs.
const (
	// LabelGate names the MetricGate.
	LabelGate = "analysis.sluice.dev/gate"
	// LabelRollout names the Rollout analysed.
	LabelRollout = "analysis.sluice.dev/rollout"
	// LabelMetric names the metric.
	LabelMetric = "analysis.sluice.dev/metric"
	// LabelStep is the step analysed (0: background).
	LabelStep = "analysis.sluice.dev/step"
	// LabelIndex is the measurement's index in its run.
	LabelIndex = "analysis.sluice.dev/index"
	// LabelRun is the hash of the run (Rollout, release, step).
	LabelRun = "analysis.sluice.dev/run"
	// LabelKey is the hash of the measurement's whole key.
	LabelKey = "analysis.sluice.dev/key"
)

// DefaultTTL is how long a finished Job stays when its template sets no
// ttlSecondsAfterFinished: long enough to read its outcome after a manager
// restart, short enough not to pile up.
const DefaultTTL = int32(3600)

// FieldManager names the Jobs' writer.
const FieldManager = "sluice-analysis"

// Provider runs Jobs.
type Provider struct {
	// Client creates, reads and deletes Jobs.
	Client client.Client
}

var _ provider.Provider = (*Provider)(nil)

// Measure starts the measurement's Job, or reads the one started before:
// Pending while it runs, true once it completed, false once it failed.
func (p *Provider) Measure(ctx context.Context, q provider.Query) (provider.Result, error) {
	if q.Metric.Provider.Job == nil {
		return provider.Result{}, errors.New("the metric has no job provider")
	}
	want, err := Build(q)
	if err != nil {
		return provider.Result{}, err
	}
	got := &batchv1.Job{}
	err = p.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		p.deleteEarlier(ctx, q)
		if err := p.Client.Create(ctx, want, client.FieldOwner(FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
			return provider.Result{}, fmt.Errorf("creating job %s: %w", want.Name, err)
		}
		return provider.Result{Pending: true}, nil
	}
	if err != nil {
		return provider.Result{}, fmt.Errorf("reading job %s: %w", want.Name, err)
	}
	if got.Labels[LabelKey] != want.Labels[LabelKey] {
		return provider.Result{}, fmt.Errorf("job %s exists and is not this measurement's", want.Name)
	}
	return Outcome(got), nil
}

// Outcome reads a Job's result: true once it completed, false once it
// failed, Pending before.
func Outcome(j *batchv1.Job) provider.Result {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return provider.Result{Value: true}
		case batchv1.JobFailed:
			return provider.Result{Value: false}
		}
	}
	return provider.Result{Pending: true}
}

// deleteEarlier deletes the Jobs of the metric's earlier measurements in
// the same run, and those of its earlier runs: their outcomes are recorded
// (a later measurement is only asked for once they are). Best effort: the owner reference and the TTL catch what
// it misses.
func (p *Provider) deleteEarlier(ctx context.Context, q provider.Query) {
	list := &batchv1.JobList{}
	if err := p.Client.List(ctx, list, client.InNamespace(q.Gate.Namespace), client.MatchingLabels{
		LabelGate: q.Gate.Name, LabelRollout: q.Key.Rollout, LabelMetric: q.Key.Metric,
	}); err != nil {
		return
	}
	for i := range list.Items {
		j := &list.Items[i]
		idx, err := strconv.Atoi(j.Labels[LabelIndex])
		sameRun := j.Labels[LabelRun] == q.Key.RunHash()
		if j.DeletionTimestamp != nil || (sameRun && (err != nil || int32(idx) >= q.Key.Index)) { //nolint:gosec // indexes are small
			continue
		}
		_ = p.Client.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &j.UID})
	}
}

// Build makes the Job of measurement q from its metric's template: named
// after the key, labelled, owned by the gate, with the template variables
// in every container's environment.
func Build(q provider.Query) (*batchv1.Job, error) {
	spec := q.Metric.Provider.Job
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   q.Gate.Namespace,
			Name:        Name(q.Gate.Name, q.Key),
			Labels:      map[string]string{},
			Annotations: map[string]string{},
		},
		Spec: *spec.Spec.DeepCopy(),
	}
	for k, v := range spec.Metadata.Labels {
		j.Labels[k] = v
	}
	for k, v := range spec.Metadata.Annotations {
		j.Annotations[k] = v
	}
	j.Labels[LabelGate] = q.Gate.Name
	j.Labels[LabelRollout] = q.Key.Rollout
	j.Labels[LabelMetric] = q.Key.Metric
	j.Labels[LabelStep] = strconv.Itoa(int(q.Key.Step))
	j.Labels[LabelIndex] = strconv.Itoa(int(q.Key.Index))
	j.Labels[LabelRun] = q.Key.RunHash()
	j.Labels[LabelKey] = q.Key.Hash()
	j.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: analysisv1alpha1.GroupVersion.String(), Kind: "MetricGate", Name: q.Gate.Name, UID: q.Gate.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	if j.Spec.TTLSecondsAfterFinished == nil {
		j.Spec.TTLSecondsAfterFinished = ptr.To(DefaultTTL)
	}
	// The Job controller picks the selector; a template's own would tie
	// every measurement's Job to the same pods.
	j.Spec.Selector, j.Spec.ManualSelector = nil, nil
	if err := check(&j.Spec.Template.Spec); err != nil {
		return nil, err
	}
	env := Env(q)
	for i := range j.Spec.Template.Spec.Containers {
		c := &j.Spec.Template.Spec.Containers[i]
		c.Env = append(c.Env, env...)
	}
	for i := range j.Spec.Template.Spec.InitContainers {
		c := &j.Spec.Template.Spec.InitContainers[i]
		c.Env = append(c.Env, env...)
	}
	return j, nil
}

// check refuses a template the Job controller would refuse, with the field.
func check(pod *corev1.PodSpec) error {
	if len(pod.Containers) == 0 {
		return errors.New("job.spec.template.spec.containers: at least one container is required")
	}
	if rp := pod.RestartPolicy; rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
		return fmt.Errorf("job.spec.template.spec.restartPolicy %q: use Never or OnFailure", rp)
	}
	return nil
}

// Env returns the template variables as environment variables:
// SLUICE_NAMESPACE, SLUICE_ROLLOUT, SLUICE_CANARY_REVISION, ...
func Env(q provider.Query) []corev1.EnvVar {
	keys := make([]string, 0, len(q.Vars))
	for k := range q.Vars {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]corev1.EnvVar, 0, len(keys))
	for _, k := range keys {
		out = append(out, corev1.EnvVar{Name: EnvName(k), Value: q.Vars[k]})
	}
	return out
}

// EnvName is the environment variable of template variable name:
// canaryService is SLUICE_CANARY_SERVICE.
func EnvName(name string) string {
	var b strings.Builder
	b.WriteString("SLUICE_")
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			continue
		}
		b.WriteString(strings.ToUpper(string(r)))
	}
	return b.String()
}

// Name is the Job of measurement k of the gate: the gate's and metric's
// names, shortened, and the key's hash, within 52 characters (the Job
// controller adds to it for the pods' names).
func Name(gate string, k provider.Key) string {
	prefix := short(gate, 20) + "-" + short(k.Metric, 20)
	return prefix + "-" + k.Hash()
}

func short(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, "-.")
}
