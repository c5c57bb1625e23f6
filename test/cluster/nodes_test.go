package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestFakeNode_isUntaintedManagedByKwokAndSelectable(t *testing.T) {
	node := fakeNode(2)
	if len(node.Spec.Taints) > 0 {
		t.Errorf("taints = %v, want none", node.Spec.Taints)
	}
	if node.Annotations[fakeNodeAnnotation] != fakeNodeValue {
		t.Errorf("annotation %s = %q, want %q", fakeNodeAnnotation, node.Annotations[fakeNodeAnnotation], fakeNodeValue)
	}
	sel, err := labels.Parse(FakeNodeSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(node.Labels)) {
		t.Errorf("labels %v do not match %s", node.Labels, FakeNodeSelector)
	}
	if got := node.Labels[corev1.LabelHostname]; got != node.Name {
		t.Errorf("hostname label = %q, want %q", got, node.Name)
	}
	if pods := node.Status.Allocatable.Pods().Value(); pods != 110 {
		t.Errorf("allocatable pods = %d, want 110", pods)
	}
	if node.Spec.PodCIDR != "10.244.2.0/24" {
		t.Errorf("podCIDR = %s, want 10.244.2.0/24", node.Spec.PodCIDR)
	}
}

func TestNodeSchedulable(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	notReady := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse}
	tests := []struct {
		name    string
		node    corev1.Node
		wantErr bool
	}{
		{name: "ready and untainted", node: nodeWith([]corev1.NodeCondition{ready}, nil, false)},
		{name: "no conditions yet", node: nodeWith(nil, nil, false), wantErr: true},
		{name: "not ready", node: nodeWith([]corev1.NodeCondition{notReady}, nil, false), wantErr: true},
		{
			name: "still tainted not-ready",
			node: nodeWith([]corev1.NodeCondition{ready},
				[]corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}, false),
			wantErr: true,
		},
		{
			name: "PreferNoSchedule taint does not block",
			node: nodeWith([]corev1.NodeCondition{ready},
				[]corev1.Taint{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}, false),
		},
		{name: "cordoned", node: nodeWith([]corev1.NodeCondition{ready}, nil, true), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := nodeSchedulable(&tt.node); (err != nil) != tt.wantErr {
				t.Errorf("nodeSchedulable() = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

// nodeWith returns a node with the given conditions, taints and cordon.
func nodeWith(conds []corev1.NodeCondition, taints []corev1.Taint, unschedulable bool) corev1.Node {
	n := corev1.Node{}
	n.Name = "n"
	n.Status.Conditions = conds
	n.Spec.Taints = taints
	n.Spec.Unschedulable = unschedulable
	return n
}
