package migrate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

const (
	v1 = "registry.example/shop/web:v1"
	v2 = "registry.example/shop/web:v2"
	// kruise is the field manager of what OpenKruise Rollouts wrote.
	kruise = "kruise-rollout"
)

// Given a cluster where OpenKruise Rollouts ran: its Rollout and
// BatchRelease CRDs stored v1alpha1 (storedVersions [v1alpha1]), and two
// releases stopped at step 1 of 1 / 50% / 100%, each with its v1alpha1
// Rollout and BatchRelease: a Deployment of 4 pods held as OpenKruise
// holds one in place (Recreate, paused, its rollingUpdate in
// rollouts.kruise.io/deployment-strategy, 1 new pod and 3 old ones), and a
// StatefulSet of 4 pods with OpenKruise's mid-release partition 3
// When step 1 of the Deployment's release is approved while no controller
// runs (kubectl-kruise rollout approve, a status patch), sluice's CRDs are
// installed over OpenKruise's, sluice is started and each release is
// approved step by step
// Then sluice stores every object as v1beta1 (storedVersions [v1beta1])
// before it serves them from its cache, the approval given before sluice ran moves the Deployment's release
// on to step 2 (it is not lost when sluice first writes the status), and
// the v1alpha1 BatchReleases read as v1beta1, sluice adopts both
// workloads and finishes both releases: the Deployment ends on the new
// revision with its RollingUpdate strategy back (never Recreate) and
// nothing of OpenKruise or sluice left on it, the StatefulSet with every
// pod updated and no partition (OpenKruise's 3 was not taken for the
// user's).
func TestMigrate_releasesOpenKruiseLeftInFlight_finish(t *testing.T) {
	ctx := poll.Context(t)
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(suite.cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	installKruiseCRDs(t, c)
	ns := kube.Namespace(t, c, "migrate")

	web := heldDeployment(t, c, ns, "web")
	db := partitionedStatefulSet(t, c, ns, "db")
	for _, w := range []struct {
		kind, name, stable, update string
		obj                        client.Object
	}{
		{"Deployment", "web", web.stable, web.update, web.obj},
		{"StatefulSet", "db", db.stable, db.update, db.obj},
	} {
		ro := kruiseRollout(t, c, ns, w.kind, w.name, w.stable, w.update)
		br := kruiseBatchRelease(t, c, ns, w.kind, w.name, ro, w.stable, w.update)
		markControlled(t, c, w.obj, br)
	}
	for _, crd := range []string{"rollouts.rollouts.kruise.io", "batchreleases.rollouts.kruise.io"} {
		if got := storedVersions(t, c, crd); !slices.Equal(got, []string{"v1alpha1"}) {
			t.Fatalf("CRD %s storedVersions %v before sluice, want [v1alpha1]", crd, got)
		}
	}

	// The Deployment's step 1 is approved while nothing runs, through
	// OpenKruise's v1alpha1 (sluice's CRDs are not installed yet).
	approveV1alpha1(t, c, ns, "web")

	// Install sluice over OpenKruise, then start it.
	if err := env.InstallCRDs(ctx, suite.cfg); err != nil {
		t.Fatalf("installing sluice's CRDs over OpenKruise's: %v", err)
	}
	m, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-migrate", Logger: poll.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })

	// sluice stores every Rollout and BatchRelease as v1beta1 again before
	// it reads them from its cache, and says so in the CRDs.
	for _, crd := range []string{"rollouts.rollouts.kruise.io", "batchreleases.rollouts.kruise.io"} {
		poll.Until(t, "CRD "+crd+" storing v1beta1 only", func() (bool, string) {
			got := storedVersions(t, c, crd)
			return slices.Equal(got, []string{"v1beta1"}), fmt.Sprintf("storedVersions %v", got)
		})
	}

	// The BatchReleases OpenKruise stored as v1alpha1 read as v1beta1.
	for _, name := range []string{"web", "db"} {
		br := &rolloutsv1beta1.BatchRelease{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, br); err != nil {
			t.Fatalf("reading BatchRelease %s as v1beta1: %v", name, err)
		}
		if br.Spec.WorkloadRef.Name != name || br.Spec.ReleasePlan.RollingStyle != rolloutsv1beta1.PartitionRollingStyle || len(br.Spec.ReleasePlan.Batches) != 3 {
			t.Fatalf("BatchRelease %s as v1beta1: spec %+v", name, br.Spec)
		}
	}

	// sluice adopts the Deployment: RollingUpdate again, held its own way.
	poll.Until(t, "the Deployment adopted", func() (bool, string) {
		d := kube.Deployment(t, c, ns, "web")
		_, restore := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
		_, kruiseStrategy := d.Annotations["rollouts.kruise.io/deployment-strategy"]
		return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType && restore && !kruiseStrategy && d.Spec.Paused,
			fmt.Sprintf("strategy %+v paused %v annotations %v", d.Spec.Strategy, d.Spec.Paused, d.Annotations)
	})

	// The Deployment's release goes on to step 2 on the approval given
	// before sluice ran.
	waitStep(t, c, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approve(t, c, ns, "web")
	// The StatefulSet's is approved once sluice paused it at step 1 itself:
	// the status OpenKruise left already says so, and an approval patched
	// at once races sluice's first look (it may come just before it,
	// which is the Deployment's case above, or just after).
	waitStep(t, c, ns, "db", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if pods := kube.PodImages(t, c, ns, "db"); pods[v2] != 1 || pods[v1] != 3 {
		t.Fatalf("db at step 1: pods %v, want 1 new and 3 old", pods)
	}
	approve(t, c, ns, "db")
	waitStep(t, c, ns, "db", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approve(t, c, ns, "db")
	for _, name := range []string{"web", "db"} {
		poll.Until(t, "release of "+name+" completed", func() (bool, string) {
			ro := getRollout(t, c, ns, name)
			b, _ := json.Marshal(ro.Status)
			return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted, string(b)
		})
	}

	kube.WaitDeploymentComplete(t, c, ns, "web", v2)
	d := kube.Deployment(t, c, ns, "web")
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Paused || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxSurge.String() != "25%" || ru.MaxUnavailable.String() != "25%" {
		t.Errorf("Deployment handed back paused=%v strategy %+v, want RollingUpdate 25%%/25%%", d.Spec.Paused, d.Spec.Strategy)
	}
	for k := range d.Annotations {
		if strings.HasPrefix(k, "rollouts.kruise.io/") || strings.HasPrefix(k, "batchrelease.") || strings.HasPrefix(k, "sluice.dev/") {
			t.Errorf("annotation %s left on the Deployment", k)
		}
	}
	for _, k := range []string{"rollouts.kruise.io/controlled-by-advanced-deployment-controller", rolloutsv1beta1.StableRevisionLabel} {
		if _, ok := d.Labels[k]; ok {
			t.Errorf("label %s left on the Deployment", k)
		}
	}

	poll.Until(t, "StatefulSet db fully updated", func() (bool, string) {
		s := &appsv1.StatefulSet{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db"}, s); err != nil {
			return false, err.Error()
		}
		var partition *int32
		if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil {
			partition = ru.Partition
		}
		pods := kube.PodImages(t, c, ns, "db")
		ok := (partition == nil || *partition == 0) && s.Status.UpdatedReplicas == 4 && s.Status.ReadyReplicas == 4 &&
			s.Status.CurrentRevision == s.Status.UpdateRevision && pods[v2] == 4 && len(pods) == 1
		return ok, fmt.Sprintf("partition %v status %+v pods %v", ptrString(partition), s.Status, pods)
	})
}

// installKruiseCRDs creates the Rollout and BatchRelease CRDs as an
// OpenKruise Rollouts that stored v1alpha1 had them.
func installKruiseCRDs(t *testing.T, c client.Client) {
	t.Helper()
	for _, kind := range []string{"Rollout", "BatchRelease"} {
		plural := strings.ToLower(kind) + "s"
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".rollouts.kruise.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "rollouts.kruise.io",
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1alpha1", Served: true, Storage: true,
					Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}},
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				}},
			},
		}
		if err := c.Create(poll.Context(t), crd, client.FieldOwner(kruise)); err != nil {
			t.Fatalf("creating OpenKruise's CRD %s: %v", crd.Name, err)
		}
		poll.Until(t, "CRD "+crd.Name+" served", func() (bool, string) {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion("rollouts.kruise.io/v1alpha1")
			list.SetKind(kind + "List")
			err := c.List(poll.Context(t), list)
			return err == nil, fmt.Sprint(err)
		})
	}
}

func storedVersions(t *testing.T, c client.Client, name string) []string {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(poll.Context(t), types.NamespacedName{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// workload is a workload written mid-release, and its revisions.
type workload struct {
	obj            client.Object
	stable, update string
}

// heldDeployment creates the Deployment name of 4 pods as OpenKruise
// leaves one it releases in place at its first batch: Recreate and
// paused, the user's rollingUpdate kept in its deployment-strategy
// annotation, a ReplicaSet of the new revision with 1 pod beside the old
// one with 3.
func heldDeployment(t *testing.T, c client.Client, ns, name string) workload {
	t.Helper()
	return heldDeploymentKeeping(t, c, ns, name, `{"rollingStyle":"Partition","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"},"paused":false,"partition":1}`)
}

// heldDeploymentKeeping is heldDeployment with strategy as OpenKruise's
// deployment-strategy annotation.
func heldDeploymentKeeping(t *testing.T, c client.Client, ns, name, strategy string) workload {
	t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"rollouts.kruise.io/workload-type": "deployment"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name, v1),
		},
	}
	if err := c.Create(poll.Context(t), d); err != nil {
		t.Fatal(err)
	}
	kube.WaitDeploymentComplete(t, c, ns, name, v1)
	stable := rsOf(t, c, ns, name, v1).Labels[appsv1.DefaultDeploymentUniqueLabelKey]

	// One pod of the new revision, as OpenKruise's Deployment controller
	// placed it: let Kubernetes create it, and keep it from going on.
	patch := fmt.Sprintf(`{"spec":{"minReadySeconds":3600,"progressDeadlineSeconds":7200,"strategy":{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0}},"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, kube.Container, v2)
	mergePatch(t, c, d, patch)
	poll.Until(t, "one pod of the new revision", func() (bool, string) {
		rs := rsOf(t, c, ns, name, v2)
		return rs != nil && rs.Status.ReadyReplicas == 1, fmt.Sprint(kube.PodImages(t, c, ns, name))
	})
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"labels": map[string]any{rolloutsv1beta1.StableRevisionLabel: stable, "rollouts.kruise.io/controlled-by-advanced-deployment-controller": "true"},
			"annotations": map[string]any{
				rolloutsv1beta1.InProgressingAnnotation:      `{"rolloutName":"` + name + `"}`,
				"rollouts.kruise.io/deployment-strategy":     strategy,
				"rollouts.kruise.io/deployment-extra-status": `{"updatedReadyReplicas":1,"expectedUpdatedReplicas":1}`,
			},
		},
		"spec": map[string]any{"paused": true, "minReadySeconds": 0, "progressDeadlineSeconds": 600, "strategy": map[string]any{"type": "Recreate", "rollingUpdate": nil}},
	})
	mergePatch(t, c, d, string(b))
	old := rsOf(t, c, ns, name, v1)
	if *old.Spec.Replicas != 3 {
		mergePatch(t, c, old, `{"spec":{"replicas":3}}`)
	}
	poll.Until(t, "3 old pods and 1 new", func() (bool, string) {
		pods := kube.PodImages(t, c, ns, name)
		return pods[v1] == 3 && pods[v2] == 1, fmt.Sprint(pods)
	})
	update := rsOf(t, c, ns, name, v2).Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	return workload{obj: d, stable: stable, update: update}
}

// partitionedStatefulSet creates the StatefulSet name of 4 pods as
// OpenKruise leaves one at its first batch: the new revision in its pod
// template and the partition at 3, so that one pod runs it.
func partitionedStatefulSet(t *testing.T, c client.Client, ns, name string) workload {
	t.Helper()
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"rollouts.kruise.io/workload-type": "statefulset"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr[int32](4),
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template:            podTemplate(name, v1),
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
		},
	}
	if err := c.Create(poll.Context(t), s); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	poll.Until(t, "StatefulSet "+name+" ready", func() (bool, string) {
		if err := c.Get(poll.Context(t), key, s); err != nil {
			return false, err.Error()
		}
		return s.Status.ReadyReplicas == 4 && s.Status.UpdatedReplicas == 4, fmt.Sprintf("%+v", s.Status)
	})
	stable := s.Status.CurrentRevision
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{rolloutsv1beta1.InProgressingAnnotation: `{"rolloutName":"` + name + `"}`}},
		"spec": map[string]any{
			"updateStrategy": map[string]any{"rollingUpdate": map[string]any{"partition": 3}},
			"template":       map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": kube.Container, "image": v2}}}},
		},
	})
	mergePatch(t, c, s, string(b))
	poll.Until(t, "one pod of "+name+" updated", func() (bool, string) {
		if err := c.Get(poll.Context(t), key, s); err != nil {
			return false, err.Error()
		}
		pods := kube.PodImages(t, c, ns, name)
		return s.Status.UpdatedReplicas == 1 && s.Status.ReadyReplicas == 4 && pods[v2] == 1, fmt.Sprintf("%+v %v", s.Status, pods)
	})
	return workload{obj: s, stable: stable, update: s.Status.UpdateRevision}
}

func podTemplate(name, image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: kube.Container, Image: image}}},
	}
}

// rsOf is the ReplicaSet of Deployment name running image; nil when none.
func rsOf(t *testing.T, c client.Client, ns, name, image string) *appsv1.ReplicaSet {
	t.Helper()
	list := &appsv1.ReplicaSetList{}
	if err := c.List(poll.Context(t), list, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if list.Items[i].Spec.Template.Spec.Containers[0].Image == image {
			return &list.Items[i]
		}
	}
	return nil
}

// kruiseRollout creates the v1alpha1 Rollout name of the workload kind/name
// as OpenKruise leaves it paused at step 1 of 1 / 50% / 100%.
func kruiseRollout(t *testing.T, c client.Client, ns, kind, name, stable, update string) *unstructured.Unstructured {
	t.Helper()
	ro := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"namespace": ns, "name": name, "annotations": map[string]any{rolloutsv1beta1.RollingStyleAnnotation: "partition"}},
		"spec": map[string]any{
			"objectRef": map[string]any{"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": kind, "name": name}},
			"strategy": map[string]any{"canary": map[string]any{"steps": []any{
				map[string]any{"replicas": int64(1)}, map[string]any{"replicas": "50%"}, map[string]any{"replicas": "100%"},
			}}},
		},
	}}
	if err := c.Create(poll.Context(t), ro, client.FieldOwner(kruise)); err != nil {
		t.Fatalf("creating Rollout %s as v1alpha1: %v", name, err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	ro.Object["status"] = map[string]any{
		"observedGeneration": ro.GetGeneration(),
		"phase":              "Progressing",
		"message":            "Rollout is in step(1/3), and you need manually confirm to enter the next step",
		"conditions": []any{map[string]any{
			"type": "Progressing", "status": "True", "reason": "InRolling", "message": "Rollout is in Progressing",
			"lastUpdateTime": now, "lastTransitionTime": now,
		}},
		"canaryStatus": map[string]any{
			"observedWorkloadGeneration": int64(1), "rolloutHash": "kruise", "stableRevision": stable,
			"canaryRevision": update, "podTemplateHash": update, "canaryReplicas": int64(1), "canaryReadyReplicas": int64(1),
			"currentStepIndex": int64(1), "currentStepState": "StepPaused", "message": "BatchRelease is at state Ready, rollout-id , step 1",
			"lastUpdateTime": now,
		},
	}
	if err := c.Status().Update(poll.Context(t), ro, client.FieldOwner(kruise)); err != nil {
		t.Fatalf("writing the status of Rollout %s as v1alpha1: %v", name, err)
	}
	return ro
}

// kruiseBatchRelease creates the v1alpha1 BatchRelease of Rollout ro as
// OpenKruise leaves it with batch 0 ready.
func kruiseBatchRelease(t *testing.T, c client.Client, ns, kind, name string, ro *unstructured.Unstructured, stable, update string) *unstructured.Unstructured {
	t.Helper()
	br := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "BatchRelease",
		"metadata": map[string]any{
			"namespace": ns, "name": name,
			"annotations": map[string]any{rolloutsv1beta1.RollingStyleAnnotation: "partition"},
			"ownerReferences": []any{map[string]any{
				"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout", "name": name, "uid": string(ro.GetUID()),
				"controller": true, "blockOwnerDeletion": true,
			}},
		},
		"spec": map[string]any{
			"targetReference": map[string]any{"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": kind, "name": name}},
			"releasePlan": map[string]any{
				"batches":        []any{map[string]any{"canaryReplicas": int64(1)}, map[string]any{"canaryReplicas": "50%"}, map[string]any{"canaryReplicas": "100%"}},
				"batchPartition": int64(0),
			},
		},
	}}
	if err := c.Create(poll.Context(t), br, client.FieldOwner(kruise)); err != nil {
		t.Fatalf("creating BatchRelease %s as v1alpha1: %v", name, err)
	}
	br.Object["status"] = map[string]any{
		"phase": "Progressing", "stableRevision": stable, "updateRevision": update,
		"observedGeneration": br.GetGeneration(), "observedWorkloadReplicas": int64(4), "observedReleasePlanHash": "kruise",
		"canaryStatus": map[string]any{"batchState": "Ready", "currentBatch": int64(0), "updatedReplicas": int64(1), "updatedReadyReplicas": int64(1)},
	}
	if err := c.Status().Update(poll.Context(t), br, client.FieldOwner(kruise)); err != nil {
		t.Fatalf("writing the status of BatchRelease %s as v1alpha1: %v", name, err)
	}
	return br
}

// markControlled records br as the controller of obj, as OpenKruise does.
func markControlled(t *testing.T, c client.Client, obj client.Object, br *unstructured.Unstructured) {
	t.Helper()
	info, _ := json.Marshal(metav1.NewControllerRef(br, br.GroupVersionKind()))
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{rolloutsv1beta1.ControlInfoAnnotation: string(info)}}})
	mergePatch(t, c, obj, string(b))
}

func mergePatch(t *testing.T, c client.Client, obj client.Object, patch string) {
	t.Helper()
	if err := c.Patch(poll.Context(t), obj, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner(kruise)); err != nil {
		t.Fatalf("patching %s: %v", obj.GetName(), err)
	}
}

func getRollout(t *testing.T, c client.Client, ns, name string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
		t.Fatalf("reading Rollout %s: %v", name, err)
	}
	return ro
}

func waitStep(t *testing.T, c client.Client, ns, name string, index int32, state rolloutsv1beta1.CanaryStepState) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("Rollout %s at step %d %s", name, index, state), func() (bool, string) {
		ro := getRollout(t, c, ns, name)
		b, _ := json.Marshal(ro.Status)
		return ro.Status.CurrentStepIndex == index && ro.Status.CurrentStepState == state, string(b)
	})
}

// approve approves the current step as kubectl-kruise rollout approve does.
func approve(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := c.Status().Patch(poll.Context(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("approving Rollout %s: %v", name, err)
	}
}

// approveV1alpha1 approves as approve does, through the v1alpha1 API
// OpenKruise serves.
func approveV1alpha1(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	ro := &unstructured.Unstructured{}
	ro.SetGroupVersionKind(schema.GroupVersionKind{Group: "rollouts.kruise.io", Version: "v1alpha1", Kind: "Rollout"})
	ro.SetNamespace(ns)
	ro.SetName(name)
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := c.Status().Patch(poll.Context(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("approving Rollout %s through v1alpha1: %v", name, err)
	}
}

func ptr[T any](v T) *T { return &v }

func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
