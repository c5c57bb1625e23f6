package rollout

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func ro(name string, steps ...string) *rolloutsv1beta1.Rollout {
	r := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{}},
		},
	}
	for _, s := range steps {
		v := intstr.Parse(s)
		r.Spec.Strategy.Canary.Steps = append(r.Spec.Strategy.Canary.Steps, rolloutsv1beta1.CanaryStep{Replicas: &v})
	}
	return r
}

func TestValidate(t *testing.T) {
	withTraffic := ro("t", "1")
	withTraffic.Spec.Strategy.Canary.Steps[0].Traffic = ptr("0%")
	noRouting := ro("r", "1")
	noRouting.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{{Service: "web"}}
	both := ro("b", "1")
	both.Spec.Strategy.BlueGreen = &rolloutsv1beta1.BlueGreenStrategy{}
	canaryStatefulSet := ro("c", "1")
	canaryStatefulSet.Spec.WorkloadRef.Kind = "StatefulSet"
	canaryStatefulSet.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = true
	progressing := ro("p", "1", "50%", "100%")
	progressing.Status.Phase = rolloutsv1beta1.RolloutPhaseProgressing

	tests := []struct {
		name    string
		ro      *rolloutsv1beta1.Rollout
		old     *rolloutsv1beta1.Rollout
		others  []rolloutsv1beta1.Rollout
		wantErr string
	}{
		{name: "valid", ro: ro("a", "1", "50%", "100%")},
		{name: "zero step", ro: ro("a", "0"), wantErr: "spec.strategy.canary.steps[0].replicas"},
		{name: "percent over 100", ro: ro("a", "120%"), wantErr: "spec.strategy.canary.steps[0].replicas"},
		{name: "malformed percent", ro: ro("a", "5.5%"), wantErr: "spec.strategy.canary.steps[0].replicas"},
		{name: "ints decrease", ro: ro("a", "3", "2"), wantErr: "steps[1].replicas"},
		{name: "percents decrease", ro: ro("a", "50%", "20%"), wantErr: "steps[1].replicas"},
		{name: "mixed numbers and percentages are not compared", ro: ro("a", "6", "50%")},
		{name: "canary traffic 0%", ro: withTraffic, wantErr: "spec.strategy.canary.steps[0].traffic"},
		{name: "routing without provider", ro: noRouting, wantErr: "spec.strategy.canary.trafficRoutings[0]"},
		{name: "canary and blueGreen", ro: both, wantErr: "spec.strategy"},
		{name: "canary style of a StatefulSet", ro: canaryStatefulSet, wantErr: "spec.strategy.canary.enableExtraWorkloadForCanary"},
		{name: "conflict", ro: ro("b", "1"), others: []rolloutsv1beta1.Rollout{*ro("a", "1")}, wantErr: "spec.workloadRef"},
		{name: "steps removed mid-release", ro: ro("p", "1", "100%"), old: progressing, wantErr: "cannot remove steps"},
		{name: "steps added mid-release", ro: ro("p", "1", "20%", "50%", "100%"), old: progressing},
		{name: "update leaving invalid steps unchanged", ro: annotated(ro("a", "3", "2")), old: ro("a", "3", "2")},
		{name: "update changing invalid steps", ro: ro("a", "3", "1"), old: ro("a", "3", "2"), wantErr: "steps[1].replicas"},
		{name: "update of a conflicting Rollout naming the same workload", ro: annotated(ro("b", "1")), old: ro("b", "1"),
			others: []rolloutsv1beta1.Rollout{*ro("a", "1")}},
		{name: "enabling a conflicting Rollout", ro: ro("b", "1"), old: disabled(ro("b", "1")),
			others: []rolloutsv1beta1.Rollout{*ro("a", "1")}, wantErr: "spec.workloadRef"},
		{name: "an approval written unreadable", ro: approving(ro("a", "1"), "yes please"), old: ro("a", "1"), wantErr: "sluice.dev/approve"},
		{name: "an unreadable approval left as it was", ro: annotated(approving(ro("a", "1"), "yes please")), old: approving(ro("a", "1"), "yes please")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := validate(tt.ro, tt.old, tt.others)
			got := errs.ToAggregate()
			switch {
			case tt.wantErr == "" && got != nil:
				t.Fatalf("unexpected error: %v", got)
			case tt.wantErr != "" && (got == nil || !strings.Contains(got.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one naming %q", got, tt.wantErr)
			}
		})
	}
}

// annotated is r with an annotation validate does not check.
func annotated(r *rolloutsv1beta1.Rollout) *rolloutsv1beta1.Rollout {
	r = r.DeepCopy()
	if r.Annotations == nil {
		r.Annotations = map[string]string{}
	}
	r.Annotations["team"] = "shop"
	return r
}

// approving is r with the approval annotation v.
func approving(r *rolloutsv1beta1.Rollout, v string) *rolloutsv1beta1.Rollout {
	r = r.DeepCopy()
	if r.Annotations == nil {
		r.Annotations = map[string]string{}
	}
	r.Annotations[rolloutsv1beta1.ApproveAnnotation] = v
	return r
}

// disabled is r with spec.disabled set.
func disabled(r *rolloutsv1beta1.Rollout) *rolloutsv1beta1.Rollout {
	r = r.DeepCopy()
	r.Spec.Disabled = true
	return r
}

func ptr[T any](v T) *T { return &v }
