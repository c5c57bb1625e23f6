package recovery

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// racingClient is the client sluice's workload adapter writes through. The
// first patch whose body contains trigger is preceded by race, a write by
// someone else: this puts that write exactly between the adapter's read
// and its write, the window a check-then-write would miss.
type racingClient struct {
	client.Client
	trigger string
	race    func(ctx context.Context) error

	mu    sync.Mutex
	fired bool
	err   error
}

func (c *racingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	fire := !c.fired && c.race != nil && bytes.Contains(data, []byte(c.trigger))
	if fire {
		c.fired = true
	}
	c.mu.Unlock()
	if fire {
		if err := c.race(ctx); err != nil {
			c.err = err
			return fmt.Errorf("racing write: %w", err)
		}
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *racingClient) hasFired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

func setImage(ctx context.Context, obj client.Object, image string) error {
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image)
	return suite.c.Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
}

func podSpec(image string, labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
}

// A new pod template written between the read a batch was planned on and
// the write that releases it (the Move of a held Deployment: unpaused with
// the batch's bounds) makes that write fail: the Deployment stays paused,
// nothing of the new template is released with the previous revision's
// batch, and the next call plans again from what it reads.
func TestUpgradeBatch_deployment_templateWrittenBeforeTheMove_conflictsAndReplans(t *testing.T) {
	ctx := ctxFor(t)
	ns := newNamespace(t, "race-deploy")
	labels := map[string]string{"app": "web"}
	replicas := int32(4)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podSpec("web:v1", labels),
		},
	}
	if err := suite.c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	waitDeploymentAvailable(t, ns, "web", "web:v1")

	key := types.NamespacedName{Namespace: ns, Name: "web"}
	rc := &racingClient{Client: suite.c, trigger: `"paused":false`}
	ref := rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	rel, err := kinds.New(rc, suite.c, workload.Target{Namespace: ns, Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if err := rel.Claim(ctx, workload.Owner{BatchRelease: "web", Rollout: "web", Ref: ref}); err != nil {
		t.Fatal(err)
	}
	if err := setImage(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, "web:v2"); err != nil {
		t.Fatal(err)
	}
	rc.race = func(ctx context.Context) error {
		return setImage(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, "web:v3")
	}
	var batchErr error
	eventually(t, "the batch write met the racing template", func() (bool, string) {
		if _, err := rel.Status(ctx); err != nil {
			return false, err.Error()
		}
		_, batchErr = rel.UpgradeBatch(ctx, 2)
		if rc.err != nil {
			t.Fatal(rc.err)
		}
		return rc.hasFired(), fmt.Sprint("no move yet; last error: ", batchErr)
	})
	if !apierrors.IsConflict(batchErr) {
		t.Errorf("UpgradeBatch after a racing template change returned %v, want a conflict", batchErr)
	}
	got := &appsv1.Deployment{}
	if err := suite.c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if !got.Spec.Paused {
		t.Errorf("the Deployment was unpaused with the batch planned for web:v2 although its template is now %s", got.Spec.Template.Spec.Containers[0].Image)
	}
	// Re-planned from a fresh read, the batch is released for web:v3.
	eventually(t, "2 pods of web:v3 placed", func() (bool, string) {
		if _, err := rel.Status(ctx); err != nil {
			return false, err.Error()
		}
		placed, err := rel.UpgradeBatch(ctx, 2)
		return placed && err == nil, fmt.Sprint(placed, err)
	})
	if n := podsWithImage(t, ns, "web:v2"); n != 0 {
		t.Errorf("%d pods of web:v2 were created; none should be", n)
	}
}

// The same for a partition kind: the write that lowers a StatefulSet's
// partition fails when a new template was written since the read, so no
// pod is updated to it with the previous revision's batch.
func TestUpgradeBatch_statefulSet_templateWrittenBeforeThePartitionWrite_conflicts(t *testing.T) {
	ctx := ctxFor(t)
	ns := newNamespace(t, "race-sts")
	labels := map[string]string{"app": "web"}
	replicas := int32(4)
	zero := int32(0)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podSpec("web:v1", labels),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &zero}},
		},
	}
	if err := suite.c.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "web"}
	eventually(t, "4 ready pods of web:v1", func() (bool, string) {
		got := &appsv1.StatefulSet{}
		if err := suite.c.Get(ctx, key, got); err != nil {
			return false, err.Error()
		}
		return got.Status.ReadyReplicas == 4 && got.Status.UpdatedReplicas == 4, fmt.Sprintf("%+v", got.Status)
	})
	rc := &racingClient{Client: suite.c, trigger: `"partition":`}
	ref := rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web"}
	rel, err := kinds.New(rc, suite.c, workload.Target{Namespace: ns, Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if err := rel.Claim(ctx, workload.Owner{BatchRelease: "web", Rollout: "web", Ref: ref}); err != nil {
		t.Fatal(err)
	}
	held := &appsv1.StatefulSet{}
	if err := suite.c.Get(ctx, key, held); err != nil {
		t.Fatal(err)
	}
	heldPartition := *held.Spec.UpdateStrategy.RollingUpdate.Partition
	if err := setImage(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, "web:v2"); err != nil {
		t.Fatal(err)
	}
	rc.race = func(ctx context.Context) error {
		return setImage(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, "web:v3")
	}
	var batchErr error
	eventually(t, "the partition write met the racing template", func() (bool, string) {
		if _, err := rel.Status(ctx); err != nil {
			return false, err.Error()
		}
		_, batchErr = rel.UpgradeBatch(ctx, 1)
		if rc.err != nil {
			t.Fatal(rc.err)
		}
		return rc.hasFired(), fmt.Sprint("no partition write yet; last error: ", batchErr)
	})
	if !apierrors.IsConflict(batchErr) {
		t.Errorf("UpgradeBatch after a racing template change returned %v, want a conflict", batchErr)
	}
	got := &appsv1.StatefulSet{}
	if err := suite.c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if p := *got.Spec.UpdateStrategy.RollingUpdate.Partition; p != heldPartition {
		t.Errorf("partition lowered to %d (held at %d) although the template is now %s", p, heldPartition, got.Spec.Template.Spec.Containers[0].Image)
	}
}

func waitDeploymentAvailable(t *testing.T, ns, name, image string) {
	t.Helper()
	eventually(t, "Deployment "+name+" available on "+image, func() (bool, string) {
		d := &appsv1.Deployment{}
		if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
			return false, err.Error()
		}
		n := *d.Spec.Replicas
		s := d.Status
		return d.Spec.Template.Spec.Containers[0].Image == image && s.ObservedGeneration >= d.Generation &&
			s.UpdatedReplicas == n && s.AvailableReplicas == n && s.Replicas == n, fmt.Sprintf("%+v", s)
	})
}

func podsWithImage(t *testing.T, ns, image string) int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.Spec.Containers[0].Image == image {
			n++
		}
	}
	return n
}
