// Package rollout holds the admission webhooks for Rollouts: validation
// that names the offending field, and the mutation that records who wrote
// an approval.
package rollout

import (
	"context"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
)

// Paths where the Rollout webhooks are served.
const (
	ValidatePath = "/validate-rollouts-kruise-io-rollout"
	MutatePath   = "/mutate-rollouts-kruise-io-rollout"
)

// Validator validates Rollouts on create and update.
type Validator struct {
	// Client lists the Rollouts of a namespace.
	Client client.Reader
	// APIReader reads the workload's replica count, uncached.
	APIReader client.Reader
	// Decoder decodes admission objects.
	Decoder admission.Decoder
}

var _ admission.Handler = (*Validator)(nil)

// Handle implements admission.Handler.
func (v *Validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.SubResource != "" || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return admission.Allowed("")
	}
	ro := &rolloutsv1beta1.Rollout{}
	if err := v.Decoder.DecodeRaw(req.Object, ro); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old *rolloutsv1beta1.Rollout
	if req.Operation == admissionv1.Update {
		old = &rolloutsv1beta1.Rollout{}
		if err := v.Decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	list := &rolloutsv1beta1.RolloutList{}
	if err := v.Client.List(ctx, list, client.InNamespace(req.Namespace)); err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	errs := validate(ro, old, list.Items, v.replicas(ctx, req.Namespace, ro.Spec.WorkloadRef))
	errs = append(errs, validateV1alpha1(req, ro)...)
	if errs = v.acceptCustomKind(ctx, ro.Spec.WorkloadRef, errs); len(errs) > 0 {
		return admission.Denied(inRequestVersion(req, errs).ToAggregate().Error())
	}
	return admission.Allowed("")
}

// replicas reads spec.replicas of the workload, or nil when it cannot.
func (v *Validator) replicas(ctx context.Context, namespace string, ref rolloutsv1beta1.ObjectRef) *int32 {
	if v.APIReader == nil || ref.Name == "" {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	if err := v.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, u); err != nil {
		return nil
	}
	n, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if err != nil || !found {
		return nil
	}
	r := int32(n) //nolint:gosec // replica counts fit
	return &r
}

// Mutator records, beside the sluice.dev/approve annotation, who wrote it.
type Mutator struct {
	// Decoder decodes admission objects.
	Decoder admission.Decoder
	// Clock stamps approvals.
	Clock clock.PassiveClock
	// Delegates are users trusted to write approvals on behalf of others
	// (sluice's own identity, for approvals from pull-request labels and
	// commits): when one of them writes an approval whose JSON value names
	// "by", the context records that name instead of the writer's.
	Delegates []string
}

var _ admission.Handler = (*Mutator)(nil)

// Handle implements admission.Handler.
func (m *Mutator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.SubResource != "" || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return admission.Allowed("")
	}
	ro := &rolloutsv1beta1.Rollout{}
	if err := m.Decoder.DecodeRaw(req.Object, ro); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	old := &rolloutsv1beta1.Rollout{}
	if req.Operation == admissionv1.Update {
		if err := m.Decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	if !stampApproval(old, ro, m.approver(req.UserInfo.Username, ro), m.Clock.Now()) {
		return admission.Allowed("")
	}
	return patchResponse(req, ro)
}

// approver is who an approval written by user is recorded as: user, or the
// "by" the approval names when user is a delegate.
func (m *Mutator) approver(user string, ro *rolloutsv1beta1.Rollout) string {
	if !slices.Contains(m.Delegates, user) {
		return user
	}
	a, err := approval.Parse(ro.Annotations[rolloutsv1beta1.ApproveAnnotation])
	if err != nil || a.By == "" {
		return user
	}
	return a.By
}
