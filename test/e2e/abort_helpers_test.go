package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// The field managers of the GitOps tools whose re-applies the scenarios
// simulate: Flux's kustomize-controller applies server-side, Argo CD's
// application controller client-side (a patch of the manifest and its
// last-applied annotation).
const (
	fluxManager = "kustomize-controller"
	argoManager = "argocd-controller"
)

// deploymentManifest is the Git manifest of the Deployment name: replicas
// pods of image, labelled app=name.
func deploymentManifest(ns, name string, replicas int32, image string) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
			},
		},
	}
}

// clientSideApply applies manifest the way kubectl apply (and Argo CD)
// does: a patch of every field the manifest sets, with the
// manifest recorded in kubectl.kubernetes.io/last-applied-configuration,
// under manager.
func clientSideApply(t *testing.T, manager string, manifest map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: manifest}
	last, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	patch := u.DeepCopy()
	patch.SetAnnotations(map[string]string{corev1.LastAppliedConfigAnnotation: string(last)})
	b, err := json.Marshal(patch.Object)
	if err != nil {
		t.Fatal(err)
	}
	target := u.DeepCopy()
	// As kubectl does: a strategic merge patch for built-in kinds, a JSON
	// merge patch for custom resources (they have no patch strategies).
	patchType := types.StrategicMergePatchType
	if strings.Contains(u.GroupVersionKind().Group, ".") {
		patchType = types.MergePatchType
	}
	if err := suite.c.Patch(ctxFor(t), target, client.RawPatch(patchType, b), client.FieldOwner(manager)); err != nil {
		t.Fatalf("client-side apply of %s %s as %s: %v", u.GetKind(), u.GetName(), manager, err)
	}
}

// reapplyAsGitOpsTools re-applies manifest (the same commit) as Flux's
// drift correction and Argo CD's self-heal would: a server-side apply under
// kustomize-controller, then a client-side apply under argocd-controller.
func reapplyAsGitOpsTools(t *testing.T, manifest map[string]any) {
	t.Helper()
	applyAs(t, fluxManager, manifest)
	clientSideApply(t, argoManager, manifest)
}

// requestAbort annotates the Rollout sluice.dev/abort=true, as a person
// does with kubectl annotate.
func requestAbort(t *testing.T, ns, name string) {
	t.Helper()
	requestAbortAs(t, ns, name, "true")
}

// requestAbortAs annotates the Rollout sluice.dev/abort=value: a value
// other than the one stored is a new request (the same value written again
// changes nothing).
func requestAbortAs(t *testing.T, ns, name, value string) {
	t.Helper()
	if err := annotate(t, ns, name, rolloutsv1beta1.AbortAnnotation, value); err != nil {
		t.Fatalf("writing %s: %v", rolloutsv1beta1.AbortAnnotation, err)
	}
}

// requestRetry annotates the Rollout sluice.dev/retry=true.
func requestRetry(t *testing.T, ns, name string) {
	t.Helper()
	if err := annotate(t, ns, name, rolloutsv1beta1.RetryAnnotation, "true"); err != nil {
		t.Fatalf("writing %s: %v", rolloutsv1beta1.RetryAnnotation, err)
	}
}

// waitAborted waits until the release of the Rollout is aborted and held
// on the stable revision, and checks who aborted it at which step.
func waitAborted(t *testing.T, ns, name string, step int32) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := waitRollout(t, ns, name, "aborted and held on stable", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionProgressing)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil && r.Status.Aborted.Held &&
			c != nil && c.Reason == rolloutsv1beta1.ProgressingReasonAborted
	})
	ab := ro.Status.Aborted
	if ab.Step != step || ab.By != "sluice-admin" || ab.Via != "annotation" || ab.At == nil {
		t.Fatalf("abort record %+v, want step %d by sluice-admin via annotation", ab, step)
	}
	return ro
}

// assertStaysAborted checks for a few seconds that the Rollout stays
// aborted and the app's pods stay as want, and that the pod template of
// the workload (read by template) still runs image.
func assertStaysAborted(t *testing.T, ns, name string, want map[string]int, template func() string, image string) {
	t.Helper()
	holdsFor(t, 5*time.Second, func() string {
		ro := getRollout(t, ns, name)
		if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ro.Status.Aborted == nil {
			return "the release is no longer aborted: " + describe(ro)
		}
		if got := podImages(t, ns, name); !maps.Equal(got, want) {
			return fmt.Sprintf("pods by image %v, want %v", got, want)
		}
		if got := template(); got != image {
			return fmt.Sprintf("pod template image %s, want %s: sluice must never change it", got, image)
		}
		return ""
	})
}

// deploymentImage is the image of the Deployment's pod template.
func deploymentImage(t *testing.T, ns, name string) func() string {
	return func() string { return getDeployment(t, ns, name).Spec.Template.Spec.Containers[0].Image }
}

// waitRolledBack waits until the Rollout is Healthy with Succeeded=False
// (RolledBack).
func waitRolledBack(t *testing.T, ns, name string) *rolloutsv1beta1.Rollout {
	t.Helper()
	return waitRollout(t, ns, name, "rolled back and handed back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil && c != nil &&
			c.Status == corev1.ConditionFalse && c.Reason == "RolledBack"
	})
}
