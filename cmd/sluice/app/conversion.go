package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	"github.com/sluice-dev/sluice/webhook/registration"
)

// conversionFieldManager owns the Rollout CRD's spec.conversion, apart from
// whoever applies the CRD itself, so that applying the CRD again (without a
// conversion: controller-gen does not write one) leaves it alone.
const conversionFieldManager = "sluice-conversion"

// probeName names the Rollout (and its workload) of the dry-run create that
// checks that the API server converts through the webhook.
const probeName = "sluice-conversion-probe"

// enableConversion points the Rollout CRD's conversion at this manager's
// webhook, then waits until the API server uses it: until a dry-run create
// of a v1alpha1 Rollout comes back converted (to v1beta1 for storage and
// back). The API server picks up a changed CRD asynchronously; before it
// does, a v1alpha1 write would be stored unconverted.
//
// The conversion stays when the manager stops: v1alpha1 requests then fail
// until a manager is back, instead of being stored unconverted.
func enableConversion(ctx context.Context, c client.Client, conv *apiextensionsv1.CustomResourceConversion) error {
	if err := patchConversion(ctx, c, conv); err != nil {
		return err
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := probeConversions(ctx, c)
		if err != nil && ctx.Err() == nil {
			last = err
		}
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the API server does not convert Rollouts through the webhook: %w (last: %v)", err, last)
	}
	return nil
}

// patchConversion sets the spec.conversion of the Rollout and BatchRelease
// CRDs (registration.ConvertedCRDs) to conv.
func patchConversion(ctx context.Context, c client.Client, conv *apiextensionsv1.CustomResourceConversion) error {
	b, err := json.Marshal(conv)
	if err != nil {
		return err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	// A merge patch merges clientConfig: clear what this one does not set.
	if cc, ok := m["webhook"].(map[string]any)["clientConfig"].(map[string]any); ok {
		for _, k := range []string{"url", "service", "caBundle"} {
			if _, set := cc[k]; !set {
				cc[k] = nil
			}
		}
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"conversion": m}})
	if err != nil {
		return err
	}
	for _, name := range registration.ConvertedCRDs {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		crd.SetName(name)
		if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(conversionFieldManager)); err != nil {
			return fmt.Errorf("setting the conversion of CRD %s: %w", name, err)
		}
	}
	return nil
}

// probeConversions reports whether the API server converts v1alpha1
// Rollouts and BatchReleases through the webhook (the two probes below).
func probeConversions(ctx context.Context, c client.Client) error {
	if err := probeConversion(ctx, c); err != nil {
		return err
	}
	return probeBatchReleaseConversion(ctx, c)
}

// probeConversion dry-runs the create of a v1alpha1 Rollout whose step has a
// weight and no replicas, and checks that it comes back as written: stored
// as v1beta1 it has replicas, which only the webhook's conversion back
// removes.
func probeConversion(ctx context.Context, c client.Client) error {
	probe := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"objectRef": map[string]any{"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": probeName}},
			"strategy":  map[string]any{"canary": map[string]any{"steps": []any{map[string]any{"weight": int64(100)}}}},
			"disabled":  true,
		},
	}}
	probe.SetGroupVersionKind(rolloutsv1alpha1.GroupVersion.WithKind("Rollout"))
	probe.SetNamespace(metav1.NamespaceDefault)
	probe.SetName(probeName)
	if err := c.Create(ctx, probe, client.DryRunAll); err != nil {
		return err
	}
	name, _, _ := unstructured.NestedString(probe.Object, "spec", "objectRef", "workloadRef", "name")
	steps, _, _ := unstructured.NestedSlice(probe.Object, "spec", "strategy", "canary", "steps")
	if name != probeName || len(steps) != 1 {
		return fmt.Errorf("not converted: spec %v", probe.Object["spec"])
	}
	if _, hasReplicas := steps[0].(map[string]any)["replicas"]; hasReplicas {
		return fmt.Errorf("not converted back: spec %v", probe.Object["spec"])
	}
	return nil
}

// probeBatchReleaseConversion dry-runs the create of a v1alpha1
// BatchRelease and checks that it comes back as written: stored as v1beta1
// it names its workload in spec.workloadRef, and only the webhook's
// conversion back gives spec.targetReference again. A CRD that does not
// serve v1alpha1 (an install older than this version) has nothing to
// convert.
func probeBatchReleaseConversion(ctx context.Context, c client.Client) error {
	probe := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"targetReference": map[string]any{"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": probeName}},
			"releasePlan":     map[string]any{"batches": []any{map[string]any{"canaryReplicas": int64(1)}}},
		},
	}}
	probe.SetGroupVersionKind(rolloutsv1alpha1.GroupVersion.WithKind("BatchRelease"))
	probe.SetNamespace(metav1.NamespaceDefault)
	probe.SetName(probeName)
	if err := c.Create(ctx, probe, client.DryRunAll); meta.IsNoMatchError(err) {
		return nil
	} else if err != nil {
		return err
	}
	if name, _, _ := unstructured.NestedString(probe.Object, "spec", "targetReference", "workloadRef", "name"); name != probeName {
		return fmt.Errorf("BatchRelease not converted: spec %v", probe.Object["spec"])
	}
	return nil
}
