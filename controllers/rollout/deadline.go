package rollout

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// maxNamedPods bounds how many pods a Stalled message names.
const maxNamedPods = 5

// progressDeadline is the Rollout's sluice.dev/progress-deadline, or the
// manager's default when it has none or it cannot be read.
func (r *Reconciler) progressDeadline(ro *rolloutsv1beta1.Rollout) time.Duration {
	v, ok := ro.Annotations[rolloutsv1beta1.ProgressDeadlineAnnotation]
	if !ok {
		return r.ProgressDeadline
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		r.Recorder.Eventf(ro, nil, corev1.EventTypeWarning, "InvalidProgressDeadline", "Release",
			"Annotation %s=%q is not a duration like 10m; using %s", rolloutsv1beta1.ProgressDeadlineAnnotation, v, r.ProgressDeadline)
		return r.ProgressDeadline
	}
	return d
}

// pastDeadline reports whether the current step has been upgrading longer
// than d.
func pastDeadline(ro *rolloutsv1beta1.Rollout, d time.Duration, now time.Time) bool {
	p, ok := progress.Of(ro)
	return d > 0 && ok && p.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateUpgrade &&
		p.Common.LastUpdateTime != nil && now.Sub(p.Common.LastUpdateTime.Time) >= d
}

// unreadyPods describes the update revision's pods that are not ready, as
// "name (reason: message)", at most maxNamedPods of them.
func (r *Reconciler) unreadyPods(ctx context.Context, namespace string, ws *workload.Status) ([]string, error) {
	if ws.PodSelector == nil || ws.RevisionLabel == "" || ws.PodTemplateHash == "" {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ws.PodSelector)
	if err != nil {
		return nil, fmt.Errorf("pod selector: %w", err)
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel},
		client.MatchingLabels{ws.RevisionLabel: ws.PodTemplateHash}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing pods for the Stalled message")
		return nil, nil
	}
	var out []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && !progress.PodReady(p) {
			out = append(out, p.Name+" ("+whyNotReady(p)+")")
		}
	}
	sort.Strings(out)
	if len(out) > maxNamedPods {
		out = append(out[:maxNamedPods], fmt.Sprintf("and %d more", len(out)-maxNamedPods))
	}
	return out, nil
}

// whyNotReady gives the most telling reason a pod is not ready: not
// scheduled, a container waiting (CrashLoopBackOff, ImagePullBackOff ...)
// or terminated, or its phase.
func whyNotReady(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return short(c.Reason, c.Message)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return short(w.Reason, w.Message)
		}
		if t := cs.State.Terminated; t != nil {
			return short(t.Reason, t.Message)
		}
	}
	return string(p.Status.Phase)
}

func short(reason, message string) string {
	if i := strings.IndexByte(message, '\n'); i >= 0 {
		message = message[:i]
	}
	if len(message) > 120 {
		message = message[:120] + "..."
	}
	if message == "" {
		return reason
	}
	return reason + ": " + message
}
