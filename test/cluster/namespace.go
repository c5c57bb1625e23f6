package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// namespaceTimeout bounds the wait for a new namespace's ServiceAccount.
const namespaceTimeout = 30 * time.Second

// CreateNamespace creates the namespace name (an existing one is fine) and
// waits until pods can be created in it: kube-controller-manager adds the
// default ServiceAccount a moment after the namespace, and until then the
// ServiceAccount admission plugin rejects pods that use it.
func (c *Cluster) CreateNamespace(ctx context.Context, name string) error {
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	what := fmt.Sprintf("ServiceAccount %s/default", name)
	return waitFor(ctx, what, namespaceTimeout, moveLast(c.processes(), controllerManagerBinary), defaultServiceAccountExists(cs, name))
}
