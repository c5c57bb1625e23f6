package deployment

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestPlanGate(t *testing.T) {
	tests := []struct {
		name string
		in   gateInput
		want gate
	}{
		{
			name: "nothing to release holds",
			in:   gateInput{Replicas: 10, Desired: 0, OldReplicas: 10, Surge: 3, Unavailable: 2},
			want: gate{Mode: modeHold, MaxSurge: 0, MaxUnavailable: 2},
		},
		{
			name: "batch placed holds",
			in:   gateInput{Replicas: 10, Desired: 5, NewReplicas: 5, OldReplicas: 5, Surge: 3, Unavailable: 2, Armed: true},
			want: gate{Mode: modeHold, MaxSurge: 0, MaxUnavailable: 2},
		},
		{
			name: "hold keeps maxUnavailable at least one",
			in:   gateInput{Replicas: 10, Desired: 5, NewReplicas: 5, OldReplicas: 5, Surge: 1, Unavailable: 0},
			want: gate{Mode: modeHold, MaxSurge: 0, MaxUnavailable: 1},
		},
		{
			name: "unarmed batch arms first",
			in:   gateInput{Replicas: 10, Desired: 5, NewReplicas: 1, NewReady: 1, OldReplicas: 9, Surge: 3, Unavailable: 2},
			want: gate{Mode: modeArm, MaxSurge: 0, MaxUnavailable: 2},
		},
		{
			name: "first batch of one: unavailable one, no surge",
			in:   gateInput{Replicas: 10, Desired: 1, OldReplicas: 10, Surge: 3, Unavailable: 2, Armed: true},
			want: gate{Mode: modeMove, MaxSurge: 0, MaxUnavailable: 1},
		},
		{
			name: "half of ten, nothing ready: user's unavailable and surge",
			in:   gateInput{Replicas: 10, Desired: 5, NewReplicas: 1, OldReplicas: 9, Surge: 3, Unavailable: 2, Armed: true},
			want: gate{Mode: modeMove, MaxSurge: 3, MaxUnavailable: 2},
		},
		{
			name: "half of ten, three ready: unavailable grows with ready pods",
			in:   gateInput{Replicas: 10, Desired: 5, NewReplicas: 5, NewReady: 3, OldReplicas: 8, Surge: 3, Unavailable: 2, Armed: true},
			want: gate{Mode: modeMove, MaxSurge: 0, MaxUnavailable: 5},
		},
		{
			name: "no surge allowed: unavailable only",
			in:   gateInput{Replicas: 10, Desired: 10, NewReplicas: 5, NewReady: 5, OldReplicas: 5, Surge: 0, Unavailable: 1, Armed: true},
			want: gate{Mode: modeMove, MaxSurge: 0, MaxUnavailable: 6},
		},
		{
			name: "no unavailability allowed: surge only",
			in:   gateInput{Replicas: 4, Desired: 2, OldReplicas: 4, Surge: 1, Unavailable: 0, Armed: true},
			want: gate{Mode: modeMove, MaxSurge: 1, MaxUnavailable: 0},
		},
		{
			name: "no unavailability, surge pod ready",
			in:   gateInput{Replicas: 4, Desired: 2, NewReplicas: 1, NewReady: 1, OldReplicas: 4, Surge: 1, Unavailable: 0, Armed: true},
			want: gate{Mode: modeMove, MaxSurge: 1, MaxUnavailable: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planGate(tt.in); got != tt.want {
				t.Fatalf("planGate() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPlanGate_capacityBounds simulates Kubernetes' rolling update under the
// gates for many shapes and checks that ready capacity never drops below
// replicas-maxUnavailable, pods never exceed replicas+maxSurge, and the batch
// ends with exactly the desired pods on the new revision.
func TestPlanGate_capacityBounds(t *testing.T) {
	for replicas := int32(1); replicas <= 12; replicas++ {
		for surge := int32(0); surge <= 3; surge++ {
			for unavailable := int32(0); unavailable <= 3; unavailable++ {
				if surge == 0 && unavailable == 0 {
					continue
				}
				for desired := int32(1); desired <= replicas; desired++ {
					simulateBatch(t, replicas, desired, surge, unavailable)
				}
			}
		}
	}
}

func simulateBatch(t *testing.T, replicas, desired, surge, unavailable int32) {
	t.Helper()
	newRS, newReady, old := int32(0), int32(0), replicas
	for range 100 {
		g := planGate(gateInput{Replicas: replicas, Desired: desired, NewReplicas: newRS, NewReady: newReady,
			OldReplicas: old, Surge: surge, Unavailable: unavailable, Armed: true})
		if g.Mode == modeHold {
			if newRS != desired || old != replicas-desired {
				t.Fatalf("r=%d d=%d s=%d u=%d: held at new=%d old=%d", replicas, desired, surge, unavailable, newRS, old)
			}
			return
		}
		// Kubernetes: old ReplicaSets scale down to replicas-maxUnavailable
		// (new pods are never available), the new one up to
		// replicas+maxSurge-old, never past replicas.
		old = min(old, max(replicas-g.MaxUnavailable, 0))
		newRS = max(newRS, min(replicas+g.MaxSurge-old, replicas))
		if newRS+old > replicas+surge {
			t.Fatalf("r=%d d=%d s=%d u=%d: %d pods exceed replicas+maxSurge", replicas, desired, surge, unavailable, newRS+old)
		}
		if old+newReady < replicas-unavailable {
			t.Fatalf("r=%d d=%d s=%d u=%d: ready %d below replicas-maxUnavailable", replicas, desired, surge, unavailable, old+newReady)
		}
		if newRS > desired {
			t.Fatalf("r=%d d=%d s=%d u=%d: new ReplicaSet %d overshoots the batch", replicas, desired, surge, unavailable, newRS)
		}
		newReady = newRS // pods become ready
	}
	t.Fatalf("r=%d d=%d s=%d u=%d: batch never placed", replicas, desired, surge, unavailable)
}

func TestPlanGate_blueGreen(t *testing.T) {
	tests := []struct {
		name string
		in   gateInput
		want gate
	}{
		{"before any batch: held, one surge", gateInput{Replicas: 4, BlueGreen: true}, gate{Mode: modeHold, MaxSurge: 1}},
		{"unarmed: arm first", gateInput{Replicas: 4, Desired: 4, OldReplicas: 4, BlueGreen: true}, gate{Mode: modeArm, MaxSurge: 1}},
		{"armed: surge the whole batch, none unavailable", gateInput{Replicas: 4, Desired: 4, OldReplicas: 4, BlueGreen: true, Armed: true}, gate{Mode: modeMove, MaxSurge: 4}},
		{"placed: held with the surge it has", gateInput{Replicas: 4, Desired: 2, NewReplicas: 2, OldReplicas: 4, BlueGreen: true, Armed: true}, gate{Mode: modeHold, MaxSurge: 2}},
		{"full step: held with the timing inflated, or Kubernetes finds the new ReplicaSet saturated and drops the old pods", gateInput{Replicas: 4, Desired: 4, NewReplicas: 4, OldReplicas: 4, BlueGreen: true, Armed: true}, gate{Mode: modeHold, MaxSurge: 4, Inflated: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planGate(tt.in); got != tt.want {
				t.Fatalf("planGate() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// Every Hold, blue-green too, gives back the user's timing: a Deployment
// held between batches and unpaused by hand (kubectl rollout resume) must
// see its new pods become available, or Kubernetes never removes the old
// ones and it runs at twice its size forever.
func TestSpecPatch_holdRestoresTheUsersTiming(t *testing.T) {
	deadline := int32(600)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			rolloutsv1beta1.DeploymentOriginalAnnotation: `{"spec":{"paused":false,"minReadySeconds":5,"progressDeadlineSeconds":600,"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}}`,
		}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr[int32](4), MinReadySeconds: heldMinReadySeconds, ProgressDeadlineSeconds: ptr[int32](heldProgressDeadlineSeconds),
		},
	}
	for _, blueGreen := range []bool{false, true} {
		old := int32(2)
		if blueGreen {
			old = 4
		}
		g := planGate(gateInput{Replicas: 4, Desired: 2, NewReplicas: 2, OldReplicas: old, BlueGreen: blueGreen, Armed: true})
		if g.Mode != modeHold {
			t.Fatalf("blueGreen %v: mode %v, want hold", blueGreen, g.Mode)
		}
		spec := specPatch(g, d)
		if spec["minReadySeconds"] != int32(5) || *(spec["progressDeadlineSeconds"].(*int32)) != deadline || spec["paused"] != true {
			t.Errorf("blueGreen %v: hold patch %v, want paused with minReadySeconds 5 and progressDeadlineSeconds 600", blueGreen, spec)
		}
	}
}
