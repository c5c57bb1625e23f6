package conversion

import (
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// gen builds Rollouts from fuzz input: every choice reads from the input,
// and an exhausted input reads as zeros.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	v := g.b[0]
	g.b = g.b[1:]
	return v
}

func (g *gen) bool() bool { return g.byte()&1 == 1 }

func (g *gen) intn(n int) int { return int(g.byte()) % n }

func (g *gen) int32() int32 {
	var b [4]byte
	for i := range b {
		b[i] = g.byte()
	}
	return int32(binary.LittleEndian.Uint32(b[:])) //nolint:gosec // any bits will do
}

// small is a number around the values that matter (-2..101).
func (g *gen) small() int32 {
	if g.intn(8) == 0 {
		return g.int32()
	}
	return int32(g.intn(104)) - 2
}

var words = []string{"", "a", "web", "canary", "partition", "Partition", "CANARY", "blue", "5%", "40%", "100%", "05%", "x y", "apps/v1", "Deployment"}

func (g *gen) str() string { return words[g.intn(len(words))] }

func (g *gen) optStr() *string {
	if g.bool() {
		return nil
	}
	s := g.str()
	return &s
}

func (g *gen) optInt32() *int32 {
	if g.bool() {
		return nil
	}
	v := g.small()
	return &v
}

func (g *gen) intOrString() *intstr.IntOrString {
	switch g.intn(4) {
	case 0:
		return nil
	case 1:
		v := intstr.FromInt32(g.small())
		return &v
	case 2:
		v := intstr.FromString(trafficOf(g.small()))
		return &v
	}
	v := intstr.FromString(g.str())
	return &v
}

func (g *gen) strMap() map[string]string {
	n := g.intn(3)
	if n == 0 {
		return nil
	}
	m := map[string]string{}
	for range n {
		m[g.str()] = g.str()
	}
	return m
}

// annotations are a Rollout's annotations, often with the two the
// conversion reads, never with the two it writes.
func (g *gen) annotations() map[string]string {
	m := g.strMap()
	for _, key := range []string{rolloutsv1beta1.RollingStyleAnnotation, rolloutsv1beta1.TrafficRoutingAnnotation, rolloutsv1beta1.ApproveAnnotation} {
		if g.bool() {
			if m == nil {
				m = map[string]string{}
			}
			m[key] = g.str()
		}
	}
	return m
}

func (g *gen) meta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: g.str(), Namespace: "ns", Generation: int64(g.small()), Labels: g.strMap(), Annotations: g.annotations()}
}

func (g *gen) time() *metav1.Time {
	if g.bool() {
		return nil
	}
	t := metav1.Unix(int64(g.int32())&0x7fffffff, 0)
	return &t
}

func (g *gen) matchType() *rolloutsv1beta1.MatchType {
	types := []rolloutsv1beta1.MatchType{rolloutsv1beta1.MatchExact, rolloutsv1beta1.MatchRegularExpression, rolloutsv1beta1.MatchPathPrefix}
	if g.bool() {
		return nil
	}
	return &types[g.intn(len(types))]
}

func (g *gen) headers() []rolloutsv1beta1.HTTPHeaderMatch {
	var out []rolloutsv1beta1.HTTPHeaderMatch
	for range g.intn(3) {
		out = append(out, rolloutsv1beta1.HTTPHeaderMatch{Type: g.matchType(), Name: g.str(), Value: g.str()})
	}
	return out
}

func (g *gen) headerFilter() *rolloutsv1beta1.HTTPHeaderFilter {
	if g.intn(3) != 0 {
		return nil
	}
	f := &rolloutsv1beta1.HTTPHeaderFilter{}
	for range g.intn(3) {
		f.Set = append(f.Set, rolloutsv1beta1.HTTPHeader{Name: g.str(), Value: g.str()})
	}
	if g.bool() {
		f.Remove = []string{g.str()}
	}
	return f
}

func (g *gen) patchMetadata() *rolloutsv1beta1.PatchPodTemplateMetadata {
	if g.bool() {
		return nil
	}
	return &rolloutsv1beta1.PatchPodTemplateMetadata{Labels: g.strMap(), Annotations: g.strMap()}
}

func (g *gen) ingress() *rolloutsv1beta1.IngressTrafficRouting {
	if g.bool() {
		return nil
	}
	return &rolloutsv1beta1.IngressTrafficRouting{ClassType: g.str(), Name: g.str()}
}

func (g *gen) gateway() *rolloutsv1beta1.GatewayTrafficRouting {
	if g.bool() {
		return nil
	}
	return &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: g.optStr()}
}

func (g *gen) conditions() []rolloutsv1beta1.RolloutCondition {
	var out []rolloutsv1beta1.RolloutCondition
	for range g.intn(3) {
		out = append(out, rolloutsv1beta1.RolloutCondition{
			Type: rolloutsv1beta1.RolloutConditionType(g.str()), Status: "True", Reason: g.str(), Message: g.str(),
			LastUpdateTime: metav1.Unix(int64(g.small()), 0),
		})
	}
	return out
}

// aborted is a random status.aborted (a sluice extension both versions
// carry), or nil.
func (g *gen) aborted() *rolloutsv1beta1.AbortStatus {
	if !g.bool() {
		return nil
	}
	return &rolloutsv1beta1.AbortStatus{Revision: g.str(), StableRevision: g.str(), Step: g.small(),
		StepState: rolloutsv1beta1.CanaryStepState(g.str()), By: g.str(), Via: g.str(), Reason: g.str(), Held: g.bool()}
}

func (g *gen) common() rolloutsv1beta1.CommonStatus {
	return rolloutsv1beta1.CommonStatus{
		ObservedWorkloadGeneration: int64(g.small()), ObservedRolloutID: g.str(), RolloutHash: g.str(), StableRevision: g.str(),
		PodTemplateHash: g.str(), CurrentStepIndex: g.small(), NextStepIndex: g.small(),
		FinalisingStep: rolloutsv1beta1.FinalisingStepType(g.str()), CurrentStepState: rolloutsv1beta1.CanaryStepState(g.str()),
		Message: g.str(), LastUpdateTime: g.time(),
	}
}

// alpha is a v1alpha1 Rollout as a user or a client could write it.
func (g *gen) alpha() *rolloutsv1alpha1.Rollout {
	ro := &rolloutsv1alpha1.Rollout{ObjectMeta: g.meta()}
	ro.Spec = rolloutsv1alpha1.RolloutSpec{
		ObjectRef: rolloutsv1alpha1.ObjectRef{WorkloadRef: &rolloutsv1alpha1.WorkloadRef{APIVersion: g.str(), Kind: g.str(), Name: g.str()}},
		RolloutID: g.str(), Disabled: g.bool(),
		Strategy: rolloutsv1alpha1.RolloutStrategy{Paused: g.bool()},
	}
	if g.intn(4) != 0 {
		c := &rolloutsv1alpha1.CanaryStrategy{FailureThreshold: g.intOrString(), PatchPodTemplateMetadata: g.patchMetadata()}
		for range g.intn(5) {
			st := rolloutsv1alpha1.CanaryStep{Replicas: g.intOrString(), Pause: rolloutsv1beta1.RolloutPause{Duration: g.optInt32()}}
			st.Weight, st.RequestHeaderModifier = g.optInt32(), g.headerFilter()
			for range g.intn(3) {
				st.Matches = append(st.Matches, rolloutsv1alpha1.HttpRouteMatch{Headers: g.headers()})
			}
			c.Steps = append(c.Steps, st)
		}
		for range g.intn(3) {
			r := rolloutsv1alpha1.TrafficRoutingRef{Service: g.str(), GracePeriodSeconds: g.small(), Ingress: g.ingress(), Gateway: g.gateway()}
			for range g.intn(3) {
				r.CustomNetworkRefs = append(r.CustomNetworkRefs, rolloutsv1alpha1.CustomNetworkRef{APIVersion: g.str(), Kind: g.str(), Name: g.str()})
			}
			c.TrafficRoutings = append(c.TrafficRoutings, r)
		}
		ro.Spec.Strategy.Canary = c
	}
	ro.Status = rolloutsv1alpha1.RolloutStatus{
		ObservedGeneration: int64(g.small()), Conditions: g.conditions(),
		Phase: rolloutsv1beta1.RolloutPhase(g.str()), Message: g.str(), Aborted: g.aborted(),
	}
	if g.bool() {
		c := g.common()
		ro.Status.CanaryStatus = &rolloutsv1alpha1.CanaryStatus{
			ObservedWorkloadGeneration: c.ObservedWorkloadGeneration, ObservedRolloutID: c.ObservedRolloutID, RolloutHash: c.RolloutHash,
			StableRevision: c.StableRevision, CanaryRevision: g.str(), PodTemplateHash: c.PodTemplateHash,
			CanaryReplicas: g.small(), CanaryReadyReplicas: g.small(), CurrentStepIndex: c.CurrentStepIndex, NextStepIndex: c.NextStepIndex,
			CurrentStepState: c.CurrentStepState, Message: c.Message, LastUpdateTime: c.LastUpdateTime, FinalisingStep: c.FinalisingStep,
		}
	}
	return ro
}

func (g *gen) betaSteps() []rolloutsv1beta1.CanaryStep {
	var out []rolloutsv1beta1.CanaryStep
	for range g.intn(5) {
		st := rolloutsv1beta1.CanaryStep{Replicas: g.intOrString(), Pause: rolloutsv1beta1.RolloutPause{Duration: g.optInt32()}}
		switch g.intn(3) {
		case 0:
			t := trafficOf(g.small())
			st.Traffic = &t
		case 1:
			st.Traffic = g.optStr()
		}
		st.RequestHeaderModifier = g.headerFilter()
		for range g.intn(3) {
			m := rolloutsv1beta1.HttpRouteMatch{Headers: g.headers()}
			if g.bool() {
				m.Path = &rolloutsv1beta1.HTTPPathMatch{Type: g.matchType(), Value: g.optStr()}
			}
			for range g.intn(2) {
				m.QueryParams = append(m.QueryParams, rolloutsv1beta1.HTTPQueryParamMatch{Type: g.matchType(), Name: g.str(), Value: g.str()})
			}
			st.Matches = append(st.Matches, m)
		}
		out = append(out, st)
	}
	return out
}

func (g *gen) betaRoutings() []rolloutsv1beta1.TrafficRoutingRef {
	var out []rolloutsv1beta1.TrafficRoutingRef
	for range g.intn(3) {
		r := rolloutsv1beta1.TrafficRoutingRef{Service: g.str(), GracePeriodSeconds: g.small(), Ingress: g.ingress(), Gateway: g.gateway()}
		for range g.intn(3) {
			r.CustomNetworkRefs = append(r.CustomNetworkRefs, rolloutsv1beta1.ObjectRef{APIVersion: g.str(), Kind: g.str(), Name: g.str()})
		}
		out = append(out, r)
	}
	return out
}

// beta is a v1beta1 Rollout as a user or sluice could store it: at most one
// strategy, the status of that strategy, and the top-level step mirror
// agreeing with it (sluice writes them together).
func (g *gen) beta() *rolloutsv1beta1.Rollout {
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: g.meta()}
	ro.Spec = rolloutsv1beta1.RolloutSpec{
		WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: g.str(), Kind: g.str(), Name: g.str()},
		Disabled:    g.bool(),
		Strategy:    rolloutsv1beta1.RolloutStrategy{Paused: g.bool()},
	}
	switch g.intn(4) {
	case 0:
	case 1:
		ro.Spec.Strategy.BlueGreen = &rolloutsv1beta1.BlueGreenStrategy{
			Steps: g.betaSteps(), TrafficRoutings: g.betaRoutings(), FailureThreshold: g.intOrString(),
			TrafficRoutingRef: g.str(), DisableGenerateCanaryService: g.bool(),
		}
	default:
		ro.Spec.Strategy.Canary = &rolloutsv1beta1.CanaryStrategy{
			Steps: g.betaSteps(), TrafficRoutings: g.betaRoutings(), FailureThreshold: g.intOrString(),
			PatchPodTemplateMetadata: g.patchMetadata(), EnableExtraWorkloadForCanary: g.bool(),
			TrafficRoutingRef: g.str(), DisableGenerateCanaryService: g.bool(),
		}
	}
	ro.Status = rolloutsv1beta1.RolloutStatus{
		ObservedGeneration: int64(g.small()), Conditions: g.conditions(),
		Phase: rolloutsv1beta1.RolloutPhase(g.str()), Message: g.str(), Aborted: g.aborted(),
	}
	if g.bool() {
		c := g.common()
		if isBlueGreen(&ro.Spec) {
			ro.Status.BlueGreenStatus = &rolloutsv1beta1.BlueGreenStatus{CommonStatus: c, UpdatedRevision: g.str(), UpdatedReplicas: g.small(), UpdatedReadyReplicas: g.small()}
		} else {
			ro.Status.CanaryStatus = &rolloutsv1beta1.CanaryStatus{CommonStatus: c, CanaryRevision: g.str(), CanaryReplicas: g.small(), CanaryReadyReplicas: g.small()}
		}
		ro.Status.CurrentStepIndex, ro.Status.CurrentStepState = c.CurrentStepIndex, c.CurrentStepState
	}
	return ro
}

// wire sends v through JSON, as the webhook and the API server do.
func wire[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// roundTrips checks both round trips for one input: v1alpha1 -> v1beta1 ->
// v1alpha1 and v1beta1 -> v1alpha1 -> v1beta1 give back the same object.
func roundTrips(t *testing.T, data []byte) {
	t.Helper()
	g := &gen{b: data}
	a := wire(t, g.alpha())
	b := wire(t, g.beta())

	gotA := wire(t, toAlpha(wire(t, toBeta(a))))
	if !equality.Semantic.DeepEqual(gotA, a) {
		t.Fatalf("v1alpha1 -> v1beta1 -> v1alpha1 changed the Rollout:\nin:  %s\nout: %s\nvia: %s", jsonOf(a), jsonOf(gotA), jsonOf(toBeta(a)))
	}
	gotB := wire(t, toBeta(wire(t, toAlpha(b))))
	if !equality.Semantic.DeepEqual(gotB, b) {
		t.Fatalf("v1beta1 -> v1alpha1 -> v1beta1 changed the Rollout:\nin:  %s\nout: %s\nvia: %s", jsonOf(b), jsonOf(gotB), jsonOf(toAlpha(b)))
	}
	// A second trip through v1alpha1 is stable too (what it reads carries
	// the kept fields).
	viaA := wire(t, toAlpha(b))
	if again := wire(t, toAlpha(wire(t, toBeta(viaA)))); !equality.Semantic.DeepEqual(again, viaA) {
		t.Fatalf("reading v1alpha1, writing it back and reading again differs:\nfirst:  %s\nsecond: %s", jsonOf(viaA), jsonOf(again))
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte("canary partition weight traffic blue-green matches"))
	f.Fuzz(roundTrips)
}

// TestRoundTrip_random runs the fuzz property on many fixed random inputs,
// so that plain `go test` covers it.
func TestRoundTrip_random(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // test input
	for range 3000 {
		data := make([]byte, 200+r.IntN(400))
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		roundTrips(t, data)
	}
}
