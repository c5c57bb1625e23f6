package cluster_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestCluster_userWithoutBindings_isForbidden(t *testing.T) {
	t.Parallel()
	cfg := testCluster.RESTConfig()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	cs := kubernetes.NewForConfigOrDie(cfg)

	_, err := cs.CoreV1().Pods(metav1.NamespaceDefault).List(t.Context(), metav1.ListOptions{})

	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing pods as an unbound user: error = %v, want Forbidden (RBAC on)", err)
	}
}
