package conversion

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// seed reads one of the v1alpha1 examples of the Kruise Rollouts walkthrough.
func seed(t *testing.T, name string) *rolloutsv1alpha1.Rollout {
	t.Helper()
	raw, err := os.ReadFile("../../test/e2e/testdata/v1alpha1/" + name)
	if err != nil {
		t.Fatal(err)
	}
	ro := &rolloutsv1alpha1.Rollout{}
	if err := yaml.UnmarshalStrict(raw, ro); err != nil {
		t.Fatal(err)
	}
	ro.TypeMeta = metav1.TypeMeta{} // the conversion leaves it to its caller
	return ro
}

func toBeta(in *rolloutsv1alpha1.Rollout) *rolloutsv1beta1.Rollout {
	out := &rolloutsv1beta1.Rollout{}
	ToV1beta1(in, out)
	return out
}

func toAlpha(in *rolloutsv1beta1.Rollout) *rolloutsv1alpha1.Rollout {
	out := &rolloutsv1alpha1.Rollout{}
	ToV1alpha1(in, out)
	return out
}

func jsonOf(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func sameAs(t *testing.T, what string, got, want any) {
	t.Helper()
	if !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("%s differs:\ngot:  %s\nwant: %s", what, jsonOf(got), jsonOf(want))
	}
}

func intOrStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

func TestToV1beta1_seedPartitionExample_releasesInPlace(t *testing.T) {
	in := seed(t, "rollouts-demo.yaml")
	out := toBeta(in)

	sameAs(t, "workloadRef", out.Spec.WorkloadRef, rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "workload-demo"})
	c := out.Spec.Strategy.Canary
	if c == nil || c.EnableExtraWorkloadForCanary || len(c.Steps) != 3 {
		t.Fatalf("canary strategy %s, want 3 steps in place", jsonOf(c))
	}
	for i, want := range []string{"1", "50%", "100%"} {
		if st := c.Steps[i]; st.Replicas == nil || st.Replicas.String() != want || st.Traffic != nil || st.Pause.Duration != nil {
			t.Errorf("step %d: %s, want replicas %s, no traffic, approval", i, jsonOf(st), want)
		}
	}
	if got := out.Annotations; len(got) != 1 || got[rolloutsv1beta1.RollingStyleAnnotation] != "partition" {
		t.Errorf("annotations %v, want only the rolling style", got)
	}
	sameAs(t, "v1alpha1 read back", toAlpha(out), in)
}

func TestToV1beta1_seedCanaryExample_weightsBecomeTrafficAndReplicas(t *testing.T) {
	in := seed(t, "rollouts-canary-demo.yaml")
	out := toBeta(in)

	c := out.Spec.Strategy.Canary
	if !c.EnableExtraWorkloadForCanary {
		t.Errorf("rolling-style canary: enableExtraWorkloadForCanary false")
	}
	wantReplicas := []string{"1", "40%", "60%", "80%", "100%"}
	for i, w := range []string{"5%", "40%", "60%", "80%", "100%"} {
		st := c.Steps[i]
		if st.Traffic == nil || *st.Traffic != w || st.Replicas.String() != wantReplicas[i] {
			t.Errorf("step %d: %s, want traffic %s replicas %s", i, jsonOf(st), w, wantReplicas[i])
		}
	}
	sameAs(t, "trafficRoutings", c.TrafficRoutings, []rolloutsv1beta1.TrafficRoutingRef{{
		Service: "echoserver", Ingress: &rolloutsv1beta1.IngressTrafficRouting{ClassType: "nginx", Name: "echoserver"},
	}})
	if got := out.Annotations[rolloutsv1alpha1.V1alpha1FieldsAnnotation]; got != `{"derivedReplicas":[1,2,3,4]}` {
		t.Errorf("%s = %q, want the steps without replicas", rolloutsv1alpha1.V1alpha1FieldsAnnotation, got)
	}
	back := toAlpha(out)
	sameAs(t, "v1alpha1 read back", back, in)
	if _, ok := back.Annotations[rolloutsv1alpha1.V1alpha1FieldsAnnotation]; ok {
		t.Errorf("the v1alpha1 form carries %s", rolloutsv1alpha1.V1alpha1FieldsAnnotation)
	}
}

func alphaRollout(annotations map[string]string, apiVersion, kind string) *rolloutsv1alpha1.Rollout {
	return &rolloutsv1alpha1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", Annotations: annotations},
		Spec: rolloutsv1alpha1.RolloutSpec{
			ObjectRef: rolloutsv1alpha1.ObjectRef{WorkloadRef: &rolloutsv1alpha1.WorkloadRef{APIVersion: apiVersion, Kind: kind, Name: "w"}},
			Strategy: rolloutsv1alpha1.RolloutStrategy{Canary: &rolloutsv1alpha1.CanaryStrategy{
				Steps: []rolloutsv1alpha1.CanaryStep{{Replicas: intOrStr("1")}},
			}},
		},
	}
}

func TestToV1beta1_rollingStyle(t *testing.T) {
	tests := []struct {
		name       string
		style      *string
		apiVersion string
		kind       string
		want       bool
	}{
		{"none on a Deployment: canary, OpenKruise's default", nil, "apps/v1", "Deployment", true},
		{"none on a StatefulSet: in place", nil, "apps/v1", "StatefulSet", false},
		{"none on a CloneSet: in place", nil, "apps.kruise.io/v1alpha1", "CloneSet", false},
		{"none on a Deployment of another group: in place", nil, "example.com/v1", "Deployment", false},
		{"partition", ptr("partition"), "apps/v1", "Deployment", false},
		{"Partition, any case", ptr("Partition"), "apps/v1", "Deployment", false},
		{"canary", ptr("canary"), "apps/v1", "Deployment", true},
		{"canary on a CloneSet is what it says", ptr("canary"), "apps.kruise.io/v1alpha1", "CloneSet", true},
		{"empty: the default", ptr(""), "apps/v1", "Deployment", true},
		{"unknown: the default", ptr("blue"), "apps/v1", "StatefulSet", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ann map[string]string
			if tt.style != nil {
				ann = map[string]string{rolloutsv1beta1.RollingStyleAnnotation: *tt.style}
			}
			in := alphaRollout(ann, tt.apiVersion, tt.kind)
			out := toBeta(in)
			if got := out.Spec.Strategy.Canary.EnableExtraWorkloadForCanary; got != tt.want {
				t.Errorf("enableExtraWorkloadForCanary = %v, want %v", got, tt.want)
			}
			if v, ok := out.Annotations[rolloutsv1beta1.RollingStyleAnnotation]; (tt.style != nil) != ok || (ok && v != *tt.style) {
				t.Errorf("annotation on v1beta1 = %q (%v), want it as written", v, ok)
			}
			sameAs(t, "v1alpha1 read back", toAlpha(out), in)
		})
	}
}

func betaRollout(annotations map[string]string, kind string, canary *rolloutsv1beta1.CanaryStrategy) *rolloutsv1beta1.Rollout {
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", Annotations: annotations},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: kind, Name: "w"},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: canary},
		},
	}
}

func TestToV1alpha1_annotationsAgreeWithTheSpec(t *testing.T) {
	tests := []struct {
		name   string
		stored map[string]string
		kind   string
		extra  bool
		ref    string
		want   map[string]string // annotations of the v1alpha1 form, without the kept fields
		kept   bool
	}{
		{"the default needs no annotation", nil, "Deployment", true, "", nil, false},
		{"in place on a Deployment says partition", nil, "Deployment", false, "", map[string]string{rolloutsv1beta1.RollingStyleAnnotation: "partition"}, true},
		{"canary on a StatefulSet says canary", nil, "StatefulSet", true, "", map[string]string{rolloutsv1beta1.RollingStyleAnnotation: "canary"}, true},
		{"an annotation that agrees stays", map[string]string{rolloutsv1beta1.RollingStyleAnnotation: "Canary"}, "Deployment", true, "", map[string]string{rolloutsv1beta1.RollingStyleAnnotation: "Canary"}, false},
		{"an annotation that disagrees is rewritten", map[string]string{rolloutsv1beta1.RollingStyleAnnotation: "canary"}, "Deployment", false, "", map[string]string{rolloutsv1beta1.RollingStyleAnnotation: "partition"}, true},
		{"trafficRoutingRef becomes the annotation", nil, "Deployment", true, "shared", map[string]string{rolloutsv1beta1.TrafficRoutingAnnotation: "shared"}, true},
		{"a trafficrouting annotation that agrees stays", map[string]string{rolloutsv1beta1.TrafficRoutingAnnotation: "shared"}, "Deployment", true, "shared", map[string]string{rolloutsv1beta1.TrafficRoutingAnnotation: "shared"}, false},
		{"a stale trafficrouting annotation goes", map[string]string{rolloutsv1beta1.TrafficRoutingAnnotation: "old"}, "Deployment", true, "", map[string]string{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := betaRollout(tt.stored, tt.kind, &rolloutsv1beta1.CanaryStrategy{
				EnableExtraWorkloadForCanary: tt.extra, TrafficRoutingRef: tt.ref,
				Steps: []rolloutsv1beta1.CanaryStep{{Replicas: intOrStr("1")}},
			})
			out := toAlpha(in)
			_, kept := out.Annotations[rolloutsv1alpha1.V1beta1FieldsAnnotation]
			delete(out.Annotations, rolloutsv1alpha1.V1beta1FieldsAnnotation)
			sameAs(t, "v1alpha1 annotations", out.Annotations, tt.want)
			if kept != tt.kept {
				t.Errorf("kept fields annotation present = %v, want %v", kept, tt.kept)
			}
			back := toBeta(toAlpha(in))
			sameAs(t, "v1beta1 after the round trip", back, in)
		})
	}
}

// Given a v1beta1 Rollout whose steps match on paths and query parameters
// When it is read as v1alpha1 (headers only) and written back
// Then nothing is lost, unless the match was changed through v1alpha1.
func TestToV1alpha1_matchesKeepPathAndQueryParams(t *testing.T) {
	exact := rolloutsv1beta1.MatchExact
	header := []rolloutsv1beta1.HTTPHeaderMatch{{Type: &exact, Name: "user-agent", Value: "pc"}}
	in := betaRollout(nil, "Deployment", &rolloutsv1beta1.CanaryStrategy{
		EnableExtraWorkloadForCanary: true,
		Steps: []rolloutsv1beta1.CanaryStep{{
			Replicas: intOrStr("1"),
			TrafficRoutingStrategy: rolloutsv1beta1.TrafficRoutingStrategy{Matches: []rolloutsv1beta1.HttpRouteMatch{
				{Headers: header},
				{Path: &rolloutsv1beta1.HTTPPathMatch{Value: ptr("/api")}, Headers: header},
				{QueryParams: []rolloutsv1beta1.HTTPQueryParamMatch{{Name: "beta", Value: "1"}}},
			}},
		}},
	})
	out := toAlpha(in)
	sameAs(t, "v1alpha1 matches", out.Spec.Strategy.Canary.Steps[0].Matches,
		[]rolloutsv1alpha1.HttpRouteMatch{{Headers: header}, {Headers: header}, {}})
	if !strings.Contains(out.Annotations[rolloutsv1alpha1.V1beta1FieldsAnnotation], `"/api"`) {
		t.Fatalf("the path is not kept: %v", out.Annotations)
	}
	sameAs(t, "v1beta1 after the round trip", toBeta(out), in)

	// A user changes the headers of the second match through v1alpha1: its
	// kept path no longer applies; the third match keeps its query.
	edited := out.DeepCopy()
	edited.Spec.Strategy.Canary.Steps[0].Matches[1].Headers = []rolloutsv1beta1.HTTPHeaderMatch{{Name: "x-beta", Value: "1"}}
	got := toBeta(edited).Spec.Strategy.Canary.Steps[0].Matches
	if got[1].Path != nil || len(got[2].QueryParams) != 1 {
		t.Fatalf("matches after an edit through v1alpha1: %s", jsonOf(got))
	}
}

// Given a v1beta1 blue-green Rollout in the middle of a release
// When it is read as v1alpha1, which has no blue-green strategy
// Then it reads without a canary strategy and with its progress as
// canaryStatus; written back (also after approving or pausing it through
// v1alpha1) it is still the same blue-green Rollout.
func TestToV1alpha1_blueGreenSurvivesAReadModifyWrite(t *testing.T) {
	in := betaRollout(map[string]string{"team": "shop"}, "Deployment", nil)
	in.Spec.Strategy.BlueGreen = &rolloutsv1beta1.BlueGreenStrategy{
		Steps: []rolloutsv1beta1.CanaryStep{
			{Replicas: intOrStr("100%"), TrafficRoutingStrategy: rolloutsv1beta1.TrafficRoutingStrategy{Traffic: ptr("0%")}},
			{Replicas: intOrStr("100%"), TrafficRoutingStrategy: rolloutsv1beta1.TrafficRoutingStrategy{Traffic: ptr("100%")}},
		},
		TrafficRoutings:   []rolloutsv1beta1.TrafficRoutingRef{{Service: "web", Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: ptr("web")}}},
		TrafficRoutingRef: "shared",
	}
	in.Status = rolloutsv1beta1.RolloutStatus{
		Phase: rolloutsv1beta1.RolloutPhaseProgressing, CurrentStepIndex: 1, CurrentStepState: rolloutsv1beta1.CanaryStepStatePaused,
		BlueGreenStatus: &rolloutsv1beta1.BlueGreenStatus{
			CommonStatus:    rolloutsv1beta1.CommonStatus{CurrentStepIndex: 1, NextStepIndex: 2, CurrentStepState: rolloutsv1beta1.CanaryStepStatePaused},
			UpdatedRevision: "v2", UpdatedReplicas: 4, UpdatedReadyReplicas: 4,
		},
	}

	out := toAlpha(in)
	if out.Spec.Strategy.Canary != nil || out.Spec.ObjectRef.WorkloadRef.Name != "w" {
		t.Fatalf("v1alpha1 spec %s, want the workload and no canary strategy", jsonOf(out.Spec))
	}
	if cs := out.Status.CanaryStatus; cs == nil || cs.CanaryRevision != "v2" || cs.CanaryReadyReplicas != 4 || cs.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("v1alpha1 canaryStatus %s, want the blue-green progress", jsonOf(cs))
	}
	sameAs(t, "v1beta1 after the round trip", toBeta(out), in)

	approved := out.DeepCopy()
	approved.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	approved.Spec.Strategy.Paused = true
	back := toBeta(approved)
	sameAs(t, "blue-green strategy", back.Spec.Strategy.BlueGreen, in.Spec.Strategy.BlueGreen)
	if !back.Spec.Strategy.Paused || back.Status.BlueGreenStatus == nil || back.Status.CanaryStatus != nil ||
		back.Status.BlueGreenStatus.CurrentStepState != rolloutsv1beta1.CanaryStepStateReady || back.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateReady {
		t.Fatalf("after approving and pausing through v1alpha1: spec %s status %s", jsonOf(back.Spec.Strategy), jsonOf(back.Status))
	}

	// Giving it a canary strategy through v1alpha1 replaces blue-green.
	replaced := out.DeepCopy()
	replaced.Spec.Strategy.Canary = &rolloutsv1alpha1.CanaryStrategy{Steps: []rolloutsv1alpha1.CanaryStep{{Replicas: intOrStr("1")}}}
	if s := toBeta(replaced).Spec.Strategy; s.BlueGreen != nil || s.Canary == nil {
		t.Fatalf("strategy after writing a canary through v1alpha1: %s", jsonOf(s))
	}
}

func TestToV1beta1_rolloutIDIsKept(t *testing.T) {
	in := alphaRollout(nil, "apps/v1", "Deployment")
	in.Spec.RolloutID = "release-7"
	out := toBeta(in)
	if got := out.Annotations[rolloutsv1alpha1.V1alpha1FieldsAnnotation]; got != `{"rolloutID":"release-7"}` {
		t.Fatalf("%s = %q", rolloutsv1alpha1.V1alpha1FieldsAnnotation, got)
	}
	sameAs(t, "v1alpha1 read back", toAlpha(out), in)
}

// Given a Rollout written as v1alpha1 with a step without replicas
// When its replicas are changed through v1beta1
// Then v1alpha1 shows the new replicas instead of dropping them.
func TestToV1alpha1_derivedReplicasChangedInV1beta1AreShown(t *testing.T) {
	in := alphaRollout(nil, "apps/v1", "Deployment")
	in.Spec.Strategy.Canary.Steps = []rolloutsv1alpha1.CanaryStep{{TrafficRoutingStrategy: rolloutsv1alpha1.TrafficRoutingStrategy{Weight: ptr[int32](40)}}}
	stored := toBeta(in)
	if r := stored.Spec.Strategy.Canary.Steps[0].Replicas; r == nil || r.String() != "40%" {
		t.Fatalf("v1beta1 replicas %v, want 40%%", r)
	}
	stored.Spec.Strategy.Canary.Steps[0].Replicas = intOrStr("50%")
	if r := toAlpha(stored).Spec.Strategy.Canary.Steps[0].Replicas; r == nil || r.String() != "50%" {
		t.Fatalf("v1alpha1 replicas %v, want 50%%", r)
	}
}

// Given a Rollout read as v1alpha1, paused at step 1
// When it is approved the way kubectl-kruise does it (currentStepState set
// to StepReady in canaryStatus)
// Then the stored canaryStatus and its top-level mirror say StepReady.
func TestToV1beta1_approvalThroughV1alpha1Status(t *testing.T) {
	now := metav1.Unix(1700000000, 0)
	in := betaRollout(nil, "Deployment", &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{{Replicas: intOrStr("1")}, {Replicas: intOrStr("100%")}}})
	in.Annotations = map[string]string{rolloutsv1beta1.RollingStyleAnnotation: "partition"}
	in.Status = rolloutsv1beta1.RolloutStatus{
		ObservedGeneration: 2, Phase: rolloutsv1beta1.RolloutPhaseProgressing, Message: "step 1 paused",
		CurrentStepIndex: 1, CurrentStepState: rolloutsv1beta1.CanaryStepStatePaused,
		Conditions: []rolloutsv1beta1.RolloutCondition{{Type: rolloutsv1beta1.RolloutConditionProgressing, Status: "True", Reason: "InRolling", LastUpdateTime: now}},
		CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{
				ObservedWorkloadGeneration: 5, ObservedRolloutID: "id", RolloutHash: "h", StableRevision: "s", PodTemplateHash: "p",
				CurrentStepIndex: 1, NextStepIndex: 2, CurrentStepState: rolloutsv1beta1.CanaryStepStatePaused, Message: "m", LastUpdateTime: &now,
			},
			CanaryRevision: "c", CanaryReplicas: 1, CanaryReadyReplicas: 1,
		},
	}
	out := toAlpha(in)
	if _, ok := out.Annotations[rolloutsv1alpha1.V1beta1FieldsAnnotation]; ok {
		t.Fatalf("nothing to keep, yet: %v", out.Annotations)
	}
	sameAs(t, "v1beta1 after the round trip", toBeta(out), in)

	out.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	back := toBeta(out)
	if back.Status.CanaryStatus.CurrentStepState != rolloutsv1beta1.CanaryStepStateReady || back.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateReady ||
		back.Status.CurrentStepIndex != 1 || back.Status.CanaryStatus.NextStepIndex != 2 {
		t.Fatalf("status after approving through v1alpha1: %s", jsonOf(back.Status))
	}
}

func TestToV1beta1_unreadableKeptFieldsAreIgnored(t *testing.T) {
	in := alphaRollout(map[string]string{
		rolloutsv1alpha1.V1beta1FieldsAnnotation:  "{not json",
		rolloutsv1alpha1.V1alpha1FieldsAnnotation: `{"rolloutID":"forged"}`,
	}, "apps/v1", "Deployment")
	out := toBeta(in)
	if len(out.Annotations) != 0 || out.Spec.Strategy.BlueGreen != nil {
		t.Fatalf("v1beta1 %s, want no annotations", jsonOf(out.ObjectMeta))
	}
}

func TestWeightOf(t *testing.T) {
	tests := []struct {
		traffic string
		want    int32
		ok      bool
	}{
		{"5%", 5, true}, {"0%", 0, true}, {"100%", 100, true}, {"-3%", -3, true},
		{"05%", 0, false}, {"+5%", 0, false}, {"5", 0, false}, {"%", 0, false}, {"5.5%", 0, false}, {"99999999999%", 0, false},
	}
	for _, tt := range tests {
		got, ok := weightOf(tt.traffic)
		if got != tt.want || ok != tt.ok {
			t.Errorf("weightOf(%q) = %d, %v; want %d, %v", tt.traffic, got, ok, tt.want, tt.ok)
		}
		if ok && trafficOf(got) != tt.traffic {
			t.Errorf("trafficOf(%d) = %q, want %q", got, trafficOf(got), tt.traffic)
		}
	}
}

func ptr[T any](v T) *T { return &v }
