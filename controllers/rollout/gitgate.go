package rollout

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/canary"
)

// +kubebuilder:rbac:groups=gitops.sluice.dev,resources=gitgates,verbs=get;list;watch

// gitGate names the GitGate of ro's namespace (as the cache holds them)
// that binds ro (GitGate.Binds; a suspended gate too); "" when none does
// or the GitGate CRD is not installed.
func (r *Reconciler) gitGate(ctx context.Context, ro *rolloutsv1beta1.Rollout) (string, error) {
	gates := &gitopsv1alpha1.GitGateList{}
	switch err := r.Client.List(ctx, gates, client.InNamespace(ro.Namespace)); {
	case meta.IsNoMatchError(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("listing gitgates: %w", err)
	}
	for i := range gates.Items {
		if gates.Items[i].Binds(ro.Labels) {
			return gates.Items[i].Name, nil
		}
	}
	return "", nil
}

// appliedApproval tells whether the approval a of ro, read from its
// sluice.dev/approve annotation, is the GitOps tool's apply of a value in
// Git on a Rollout a GitGate binds. Such a value approves only through the
// gate, which records it with the identity of the commit that set it:
// taken here, it would be recorded as the GitOps tool's and get around the
// gate's policy (allowed committers, signatures). The GitOps tool's identity
// stays the approver only where no GitGate binds the Rollout. It says why
// in an event, once.
func (r *Reconciler) appliedApproval(ctx context.Context, ro *rolloutsv1beta1.Rollout, a approval.Approval) (bool, error) {
	if !approval.Applied(ro, rolloutsv1beta1.ApproveAnnotation) {
		return false, nil
	}
	gate, err := r.gitGate(ctx, ro)
	if gate == "" || err != nil {
		return false, err
	}
	r.eventOnce(ro, canary.Event{Type: corev1.EventTypeNormal, Reason: "ApprovalFromGit", Message: fmt.Sprintf(
		"Annotation %s=%q was applied from Git by %s; GitGate %s binds this Rollout, so it approves as the commit that set it, through the gate (see the gate's status)",
		rolloutsv1beta1.ApproveAnnotation, ro.Annotations[rolloutsv1beta1.ApproveAnnotation], a.By, gate)})
	return true, nil
}
