// Package ownership gives a workload's fields back to the field managers
// that owned them before a release, so that after the hand-back sluice owns
// none of them.
//
// Every write sluice makes to a held field (spec.paused, a Deployment's
// maxSurge, ...) is an update, and an update takes a field's ownership away
// from every other manager: after a release the GitOps tool that applied
// the workload with server-side apply no longer owns, say, minReadySeconds,
// sluice does, and removing minReadySeconds from the applied manifest would
// leave it set. So sluice records, when it claims a workload, who owned
// each field it is going to change (Record), and once the restore is
// written it rewrites metadata.managedFields (HandBack): sluice's entries
// go, and each recorded field goes back to its owner's entry.
//
// The record lives in an annotation of the workload and follows the
// workload's restore patch (the sluice.dev/restore-patch merge patch that
// hands it back, by sluice or by hand with kubectl): it is written only
// beside a restore patch that removes it (RecordInto), so that a hand-back
// by hand leaves nothing of sluice's behind; sluice itself applies the
// restore patch without that removal (KeepRecord) and removes the record
// with the hand-back of the fields (HandBackFields), which needs it.
package ownership

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Annotation keeps, while a release holds a workload, the owners Record
// found of the fields sluice changes. The restore patch removes it.
const Annotation = "sluice.dev/field-owners"

// Owner is the field manager that owned a field.
type Owner struct {
	// Manager is the field manager's name.
	Manager string `json:"manager"`
	// Operation is how it wrote the field: Apply or Update.
	Operation metav1.ManagedFieldsOperationType `json:"operation"`
	// APIVersion is the version of its managedFields entry.
	APIVersion string `json:"apiVersion"`
}

// Owners maps a field path ("spec.minReadySeconds") to its owners.
type Owners map[string][]Owner

// Record returns the owners, other than sluice, of each of paths (dotted
// field paths) in managedFields. A path nobody owns is left out.
func Record(managedFields []metav1.ManagedFieldsEntry, paths ...string) (Owners, error) {
	out := Owners{}
	for _, mf := range managedFields {
		if mf.Subresource != "" || mf.FieldsV1 == nil || mf.Manager == rolloutsv1beta1.FieldManager {
			continue
		}
		fields := map[string]any{}
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			return nil, fmt.Errorf("managedFields of %s: %w", mf.Manager, err)
		}
		for _, p := range paths {
			if has(fields, strings.Split(p, ".")) {
				out[p] = append(out[p], Owner{Manager: mf.Manager, Operation: mf.Operation, APIVersion: mf.APIVersion})
			}
		}
	}
	return out, nil
}

// Encode returns the annotation value of o.
func (o Owners) Encode() string {
	b, _ := json.Marshal(o)
	return string(b)
}

// Read parses the annotation value raw; empty means none were recorded.
func Read(raw string) (Owners, error) {
	o := Owners{}
	if raw == "" {
		return o, nil
	}
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", Annotation, err)
	}
	return o, nil
}

// HandBack returns managedFields without sluice's entries and with each
// field of owners that still exists in the object (present) added back to
// the entry of each of its owners (created if it is gone). It reports
// whether that differs from managedFields.
func HandBack(managedFields []metav1.ManagedFieldsEntry, owners Owners, present func(path string) bool, now time.Time) ([]metav1.ManagedFieldsEntry, bool, error) {
	var out []metav1.ManagedFieldsEntry
	changed := false
	for _, mf := range managedFields {
		if mf.Manager == rolloutsv1beta1.FieldManager && mf.Subresource == "" {
			changed = true
			continue
		}
		out = append(out, *mf.DeepCopy())
	}
	for path, list := range owners {
		if !present(path) {
			continue
		}
		for _, o := range list {
			i := find(out, o)
			if i < 0 {
				t := metav1.NewTime(now)
				out = append(out, metav1.ManagedFieldsEntry{
					Manager: o.Manager, Operation: o.Operation, APIVersion: o.APIVersion, Time: &t,
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1("{}"),
				})
				i = len(out) - 1
			}
			fields := map[string]any{}
			if err := json.Unmarshal(out[i].FieldsV1.GetRawBytes(), &fields); err != nil {
				return nil, false, fmt.Errorf("managedFields of %s: %w", o.Manager, err)
			}
			if has(fields, strings.Split(path, ".")) {
				continue
			}
			add(fields, strings.Split(path, "."))
			raw, err := json.Marshal(fields)
			if err != nil {
				return nil, false, err
			}
			out[i].FieldsV1 = metav1.NewFieldsV1(string(raw))
			changed = true
		}
	}
	if len(out) == 0 {
		// An empty list would leave managedFields as they are; one empty
		// entry clears them.
		out = []metav1.ManagedFieldsEntry{{}}
	}
	return out, changed, nil
}

func find(entries []metav1.ManagedFieldsEntry, o Owner) int {
	for i, mf := range entries {
		if mf.Manager == o.Manager && mf.Operation == o.Operation && mf.APIVersion == o.APIVersion && mf.Subresource == "" && mf.FieldsV1 != nil {
			return i
		}
	}
	return -1
}

func has(fields map[string]any, path []string) bool {
	for i, p := range path {
		v, ok := fields["f:"+p]
		if !ok {
			return false
		}
		if i == len(path)-1 {
			return true
		}
		if fields, ok = v.(map[string]any); !ok {
			return false
		}
	}
	return false
}

func add(fields map[string]any, path []string) {
	for _, p := range path {
		v, ok := fields["f:"+p].(map[string]any)
		if !ok {
			v = map[string]any{}
			fields["f:"+p] = v
		}
		fields = v
	}
}
