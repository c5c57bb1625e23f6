package ownership

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// handBackAttempts bounds how often HandBackFields writes again after obj
// changed in between.
const handBackAttempts = 5

// RecordInto adds to annotations, the annotations a claim of obj writes
// as merge patch values, the record of who owns paths (dotted field paths)
// in obj, which the release is about to change: sluice's updates take them
// over, and HandBackFields gives them back. It adds nothing when obj has a
// record already, or when the restore patch obj will carry (the one in
// annotations, else obj's own) does not remove the record, as one written
// by an older sluice does not: applied by hand, such a patch would leave
// the record behind.
func RecordInto(annotations map[string]any, obj metav1.Object, paths ...string) error {
	if _, ok := obj.GetAnnotations()[Annotation]; ok {
		return nil
	}
	restore, ok := annotations[rolloutsv1beta1.DeploymentOriginalAnnotation].(string)
	if !ok {
		restore = obj.GetAnnotations()[rolloutsv1beta1.DeploymentOriginalAnnotation]
	}
	if !removes(restore) {
		return nil
	}
	owners, err := Record(obj.GetManagedFields(), paths...)
	if err != nil {
		return err
	}
	annotations[Annotation] = owners.Encode()
	return nil
}

// removes reports whether the restore patch raw, a JSON merge patch,
// removes the record.
func removes(raw string) bool {
	var p struct {
		Metadata struct {
			Annotations map[string]*string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return false
	}
	v, ok := p.Metadata.Annotations[Annotation]
	return ok && v == nil
}

// KeepRecord takes out of the restore patch patch (a JSON merge patch as
// a map) its removal of the record, so that sluice applying it leaves the
// record to HandBackFields, which reads it and then removes it.
func KeepRecord(patch map[string]any) {
	if meta, ok := patch["metadata"].(map[string]any); ok {
		if a, ok := meta["annotations"].(map[string]any); ok {
			delete(a, Annotation)
		}
	}
}

// HandBackPatch is the JSON patch that hands obj's fields back: sluice's
// managedFields entries go, each field recorded in obj's Annotation goes
// back to its owners where content (obj as a map) still has it, and the
// record goes, all guarded by obj's resourceVersion. It is nil when that
// would change nothing.
func HandBackPatch(obj metav1.Object, content map[string]any, now time.Time) ([]byte, error) {
	raw, recorded := obj.GetAnnotations()[Annotation]
	owners, err := Read(raw)
	if err != nil {
		return nil, err
	}
	present := func(path string) bool {
		_, found, _ := unstructured.NestedFieldNoCopy(content, strings.Split(path, ".")...)
		return found
	}
	entries, changed, err := HandBack(obj.GetManagedFields(), owners, present, now)
	if err != nil {
		return nil, err
	}
	if !changed && !recorded {
		return nil, nil
	}
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
		{"op": "replace", "path": "/metadata/managedFields", "value": entries},
	}
	if recorded {
		ops = append(ops, map[string]any{"op": "remove", "path": "/metadata/annotations/" + strings.ReplaceAll(Annotation, "/", "~1")})
	}
	return json.Marshal(ops)
}

// HandBackFields gives obj's recorded fields back to the field managers
// that owned them when the release claimed it and drops sluice's
// managedFields entry (HandBackPatch), so that sluice owns nothing of a
// handed-back workload and a field removed from a server-side-applied
// manifest is really removed. It writes through c as sluice's field
// manager, and reads obj again through reader and retries while obj
// changed in between (a workload's controller writes its status all the
// time): nobody retries a hand-back once the release's marks are gone.
// what names obj in errors.
func HandBackFields(ctx context.Context, c client.Client, reader client.Reader, obj client.Object, what string) error {
	var err error
	for range handBackAttempts {
		var content map[string]any
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return err
		}
		var patch []byte
		if patch, err = HandBackPatch(obj, content, time.Now()); err != nil || patch == nil {
			return err
		}
		err = c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(rolloutsv1beta1.FieldManager))
		if err == nil || (!apierrors.IsConflict(err) && !apierrors.IsInvalid(err)) {
			break
		}
		if rerr := reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); rerr != nil {
			return fmt.Errorf("reading %s: %w", what, rerr)
		}
	}
	if err != nil {
		return fmt.Errorf("handing the fields of %s back to their managers: %w", what, err)
	}
	return nil
}
