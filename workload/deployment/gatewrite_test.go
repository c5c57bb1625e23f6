package deployment

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestGatePatch(t *testing.T) {
	one := intstr.FromInt32(1)
	withRU := &appsv1.Deployment{}
	withRU.Generation = 7
	withRU.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &one}
	collided := withRU.DeepCopy()
	two := int32(2)
	collided.Status.CollisionCount = &two
	bare := &appsv1.Deployment{}
	bare.Generation = 3
	unset := &appsv1.Deployment{}
	unset.ResourceVersion = "42"
	gate := map[string]any{"paused": false, "strategy": map[string]any{"rollingUpdate": map[string]any{"maxSurge": int32(0), "maxUnavailable": int32(2)}}}
	for _, tc := range []struct {
		name string
		d    *appsv1.Deployment
		spec map[string]any
		want string
	}{
		{"a move: the generation tested, each bound added", withRU, gate,
			`[{"op":"test","path":"/metadata/generation","value":7},{"op":"add","path":"/spec/paused","value":false},` +
				`{"op":"add","path":"/spec/strategy/rollingUpdate/maxSurge","value":0},{"op":"add","path":"/spec/strategy/rollingUpdate/maxUnavailable","value":2}]`},
		{"a collision count read is tested too", collided, map[string]any{"paused": true},
			`[{"op":"test","path":"/metadata/generation","value":7},{"op":"test","path":"/status/collisionCount","value":2},{"op":"add","path":"/spec/paused","value":true}]`},
		{"no rollingUpdate yet: added whole", bare, gate,
			`[{"op":"test","path":"/metadata/generation","value":3},{"op":"add","path":"/spec/paused","value":false},` +
				`{"op":"add","path":"/spec/strategy/rollingUpdate","value":{"maxSurge":0,"maxUnavailable":2}}]`},
		{"no generation (not from an API server): the resourceVersion tested", unset, map[string]any{"paused": true},
			`[{"op":"test","path":"/metadata/resourceVersion","value":"42"},{"op":"add","path":"/spec/paused","value":true}]`},
		{"the held timing", withRU, map[string]any{"minReadySeconds": heldMinReadySeconds, "progressDeadlineSeconds": heldProgressDeadlineSeconds},
			`[{"op":"test","path":"/metadata/generation","value":7},{"op":"add","path":"/spec/minReadySeconds","value":2147483646},` +
				`{"op":"add","path":"/spec/progressDeadlineSeconds","value":2147483647}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := gatePatch(tc.d, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("patch\n%s\nwant\n%s", b, tc.want)
			}
			var ops []map[string]any
			if err := json.Unmarshal(b, &ops); err != nil {
				t.Fatal(err)
			}
		})
	}
}
