package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// FakeNodeSelector is the label selector matching the fake nodes, for tests
// that select or count them.
const FakeNodeSelector = fakeNodeLabel + "=" + fakeNodeLabelValue

// The label that marks the fake nodes.
const (
	fakeNodeLabel      = "type"
	fakeNodeLabelValue = "kwok"
)

// fakeNodeName returns the name of the fake node with the given index.
func fakeNodeName(index int) string {
	return fmt.Sprintf("kwok-node-%d", index)
}

// fakeNode returns the Node object of the fake node with the given index: a
// large, untainted linux/amd64 node that kwok manages, so ordinary workloads
// schedule on it without tolerations.
func fakeNode(index int) *corev1.Node {
	name := fakeNodeName(index)
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{fakeNodeAnnotation: fakeNodeValue},
			Labels: map[string]string{
				fakeNodeLabel:          fakeNodeLabelValue,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
				corev1.LabelHostname:   name,
			},
		},
		Spec: corev1.NodeSpec{
			PodCIDR:  nodePodCIDR(index),
			PodCIDRs: []string{nodePodCIDR(index)},
		},
		Status: corev1.NodeStatus{
			Allocatable: resources,
			Capacity:    resources.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: nodeIP(index)},
				{Type: corev1.NodeHostName, Address: name},
			},
		},
	}
}

// createFakeNodes registers n fake nodes, with pod ranges carved out of the
// /16 podNet; kwok then marks them Ready.
func createFakeNodes(ctx context.Context, cs kubernetes.Interface, n int, podNet string) error {
	for i := range n {
		node := fakeNode(i)
		cidr, err := nodePodCIDRIn(podNet, i)
		if err != nil {
			return err
		}
		node.Spec.PodCIDR, node.Spec.PodCIDRs = cidr, []string{cidr}
		_, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
	}
	return nil
}

// fakeNodesReady reports whether n fake nodes are Ready and carry no taint
// that would keep pods off them; kube-controller-manager removes the
// not-ready taint shortly after kwok reports the node Ready.
func fakeNodesReady(cs kubernetes.Interface, n int) condition {
	return func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: FakeNodeSelector})
		if err != nil {
			return false, fmt.Errorf("listing nodes: %w", err)
		}
		ready := 0
		for i := range nodes.Items {
			if err := nodeSchedulable(&nodes.Items[i]); err != nil {
				return false, err
			}
			ready++
		}
		if ready < n {
			return false, fmt.Errorf("%d of %d nodes registered", ready, n)
		}
		return true, nil
	}
}

// nodeSchedulable returns why node cannot take pods yet, or nil.
func nodeSchedulable(node *corev1.Node) error {
	readyCond := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			readyCond = true
		}
	}
	if !readyCond {
		return fmt.Errorf("node %s is not Ready", node.Name)
	}
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return fmt.Errorf("node %s has taint %s:%s", node.Name, t.Key, t.Effect)
		}
	}
	if node.Spec.Unschedulable {
		return fmt.Errorf("node %s is unschedulable", node.Name)
	}
	return nil
}

// defaultServiceAccountExists reports whether kube-controller-manager has
// created the default ServiceAccount in namespace; until then the
// ServiceAccount admission plugin rejects pods there.
func defaultServiceAccountExists(cs kubernetes.Interface, namespace string) condition {
	return func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("getting ServiceAccount %s/default: %w", namespace, err)
		}
		return true, nil
	}
}
