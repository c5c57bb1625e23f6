// Package rollout holds the admission webhooks for Rollouts: validation
// that names the offending field, and the mutation that records who wrote
// an approval.
package rollout

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
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
	// APIReader reads the CRD of a custom workload kind, uncached.
	APIReader client.Reader
	// Decoder decodes admission objects.
	Decoder admission.Decoder
}

var _ admission.Handler = (*Validator)(nil)

// Handle implements admission.Handler. An update of a Rollout being
// deleted always goes through (sluice removes its finalizer last), and so
// does one that changes nothing validate checks (metadata but the approval,
// a GitOps tool applying the same spec again).
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
		if !old.DeletionTimestamp.IsZero() {
			return admission.Allowed("the Rollout is being deleted")
		}
		if apiequality.Semantic.DeepEqual(ro.Spec, old.Spec) && sameValidatedMetadata(ro, old) {
			return admission.Allowed("nothing validated changed")
		}
	}
	var others []rolloutsv1beta1.Rollout
	if conflicts(ro, old) {
		list := &rolloutsv1beta1.RolloutList{}
		if err := v.Client.List(ctx, list, client.InNamespace(req.Namespace)); err != nil {
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("listing the Rollouts of namespace %s: %w", req.Namespace, err))
		}
		others = list.Items
	}
	errs := validate(ro, old, others)
	errs = append(errs, validateV1alpha1(req, ro, old)...)
	if errs = v.acceptCustomKind(ctx, ro.Spec.WorkloadRef, errs); len(errs) > 0 {
		return admission.Denied(inRequestVersion(req, errs).ToAggregate().Error())
	}
	return admission.Allowed("")
}

// sameValidatedMetadata reports whether ro and old agree on the metadata
// validate checks: the approval and the v1alpha1 rolling style.
func sameValidatedMetadata(ro, old *rolloutsv1beta1.Rollout) bool {
	for _, k := range []string{rolloutsv1beta1.ApproveAnnotation, rolloutsv1beta1.RollingStyleAnnotation} {
		v, ok := ro.Annotations[k]
		ov, oldOK := old.Annotations[k]
		if v != ov || ok != oldOK {
			return false
		}
	}
	return true
}

// Mutator records, beside the sluice.dev/approve, sluice.dev/abort and
// sluice.dev/retry annotations, who wrote them, when, and the revision a
// value that names none is pinned to.
type Mutator struct {
	// Decoder decodes admission objects.
	Decoder admission.Decoder
	// Clock stamps approvals.
	Clock clock.PassiveClock
	// Delegates are users trusted to write approvals, aborts and retries
	// on behalf of others (sluice's own identity, for intents from
	// pull-request labels and commits): when one of them writes a JSON
	// value that names "by", the context records that name instead of the
	// writer's.
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
	changed := false
	for _, q := range requests() {
		if stamp(q, old, ro, m.requester(req.UserInfo.Username, q.key, ro), m.Clock.Now()) {
			changed = true
		}
	}
	if !changed {
		return admission.Allowed("")
	}
	return patchResponse(req, ro)
}

// requester is who the request in annotation key written by user is
// recorded as: user, or the "by" its JSON value names when user is a
// delegate.
func (m *Mutator) requester(user, key string, ro *rolloutsv1beta1.Rollout) string {
	if !slices.Contains(m.Delegates, user) {
		return user
	}
	var by string
	if key == rolloutsv1beta1.ApproveAnnotation {
		a, err := approval.Parse(ro.Annotations[key])
		if err == nil {
			by = a.By
		}
	} else if r, err := abort.Parse(ro.Annotations[key]); err == nil {
		by = r.By
	}
	if by == "" {
		return user
	}
	return by
}
