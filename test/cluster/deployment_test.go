package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// newNamespace creates a namespace for one test, deleted when it ends.
func newNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	name := prefix + "-" + rand.String(5)
	if err := testCluster.CreateNamespace(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	return name
}

func TestCluster_deploymentOfTenReplicas_becomesAvailableWithinSeconds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(testCluster.RESTConfig())
	ns := newNamespace(t, cs, "deploy")
	const replicas int32 = 10
	labels := map[string]string{"app": "demo"}

	// Given a Deployment of ten replicas of an image no one can pull
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "app",
					Image: "registry.example/app:v1",
				}}},
			},
		},
	}
	began := time.Now()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Deployment: %v", err)
	}

	// Then every replica is scheduled, Running and Ready, and the
	// Deployment reports them available
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := cs.AppsV1().Deployments(ns).Get(ctx, deploy.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=demo"})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range pods.Items {
			if podRunningAndReady(&pods.Items[i]) {
				ready++
			}
		}
		last = fmt.Sprintf("%d pods running and ready, deployment available %d/%d",
			ready, got.Status.AvailableReplicas, replicas)
		return ready == int(replicas) && got.Status.AvailableReplicas == replicas, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d available replicas: %v; last: %s", replicas, err, last)
	}
	t.Logf("%d replicas available in %s", replicas, time.Since(began).Round(10*time.Millisecond))
}

// podRunningAndReady reports whether a pod is bound, Running and Ready.
func podRunningAndReady(pod *corev1.Pod) bool {
	if pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
