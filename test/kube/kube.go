// Package kube reads and changes the workloads of sluice's integration
// tests the way a user does: the pods of an app counted by image, an image
// change as `kubectl set image` makes it, and a Deployment waited on until
// Kubernetes reports its rollout complete. The test apps label their pods
// app=<name> and name their container "app".
package kube

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/test/poll"
)

// Container is the name of the test apps' container.
const Container = "app"

// PodImages counts the live (not terminating) pods labelled app=name by
// the image of their first container.
func PodImages(t testing.TB, c client.Reader, ns, name string) map[string]int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(poll.Context(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		t.Fatalf("listing the pods of %s/%s: %v", ns, name, err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && len(p.Spec.Containers) > 0 {
			out[p.Spec.Containers[0].Image]++
		}
	}
	return out
}

// SetImage sets the image of the container "app" of obj's pod template
// (a Deployment, StatefulSet or DaemonSet named by obj's namespace and
// name) with a strategic merge patch, as `kubectl set image` does.
func SetImage(t testing.TB, c client.Client, obj client.Object, image string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, Container, image)
	if err := c.Patch(poll.Context(t), obj, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("kubectl")); err != nil {
		t.Fatalf("setting the image of %s/%s: %v", obj.GetNamespace(), obj.GetName(), err)
	}
}

// Deployment reads the Deployment ns/name.
func Deployment(t testing.TB, c client.Reader, ns, name string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
		t.Fatalf("reading deployment %s/%s: %v", ns, name, err)
	}
	return d
}

// WaitDeploymentComplete waits until every pod of the Deployment runs
// image and is available, and Kubernetes reports the rollout complete.
func WaitDeploymentComplete(t testing.TB, c client.Reader, ns, name, image string) {
	t.Helper()
	poll.Until(t, "deployment "+name+" complete on "+image, func() (bool, string) {
		d := Deployment(t, c, ns, name)
		n := *d.Spec.Replicas
		pods := PodImages(t, c, ns, name)
		ok := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == n &&
			d.Status.AvailableReplicas == n && d.Status.Replicas == n && pods[image] == int(n) && len(pods) == 1
		return ok, fmt.Sprintf("status %+v pods %v paused %v", d.Status, pods, d.Spec.Paused)
	})
}

// Namespace creates a namespace named prefix-<random> for one test, waits
// for its default ServiceAccount (pods need it), and deletes it when the
// test passed: a failed test's namespace stays, to be looked at.
func Namespace(t testing.TB, c client.Client, prefix string) string {
	t.Helper()
	name := prefix + "-" + rand.String(6)
	if err := c.Create(poll.Context(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	poll.Until(t, "default ServiceAccount of "+name, func() (bool, string) {
		err := c.Get(poll.Context(t), types.NamespacedName{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	})
	t.Cleanup(func() {
		if !t.Failed() {
			_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
	})
	return name
}
