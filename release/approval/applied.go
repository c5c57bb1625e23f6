package approval

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastAppliedAnnotation is where a client-side apply (kubectl apply, Argo
// CD's default sync) keeps the configuration it applied.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Applied tells whether obj's annotation key holds the value a declarative
// apply of a manifest put there, as a GitOps tool writes what Git holds,
// rather than a value written by hand (kubectl annotate, kubectl sluice, a
// merge patch): either only server-side appliers own the field (Flux,
// Argo CD with server-side apply), or the value is the one the last
// client-side apply recorded (Argo CD's default sync, kubectl apply). A
// write by hand is an update, which takes the field from its appliers, and
// changes the value away from the recorded one.
func Applied(obj metav1.Object, key string) bool {
	value, ok := obj.GetAnnotations()[key]
	if !ok {
		return false
	}
	if appliedServerSide(obj.GetManagedFields(), key) {
		return true
	}
	var last struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	raw, ok := obj.GetAnnotations()[lastAppliedAnnotation]
	if !ok || json.Unmarshal([]byte(raw), &last) != nil {
		return false
	}
	recorded, ok := last.Metadata.Annotations[key]
	return ok && recorded == value
}

// appliedServerSide tells whether annotation key is owned by appliers
// only: at least one Apply entry, and no Update entry.
func appliedServerSide(entries []metav1.ManagedFieldsEntry, key string) bool {
	applied := false
	for _, mf := range entries {
		if mf.Subresource != "" || mf.FieldsV1 == nil || !ownsAnnotation(mf.FieldsV1.GetRawBytes(), key) {
			continue
		}
		if mf.Operation != metav1.ManagedFieldsOperationApply {
			return false
		}
		applied = true
	}
	return applied
}

// ownsAnnotation tells whether the fieldsV1 set raw holds annotation key.
func ownsAnnotation(raw []byte, key string) bool {
	var fields struct {
		Metadata struct {
			Annotations map[string]json.RawMessage `json:"f:annotations"`
		} `json:"f:metadata"`
	}
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	_, ok := fields.Metadata.Annotations["f:"+key]
	return ok
}
