package fakeoperators

import (
	"fmt"
	"reflect"
	"testing"
)

// pods builds live pods: old ones o0.. and updated ones u0.., with the
// first availableOld and availableUpdated of them available.
func pods(old, availableOld, updated, availableUpdated int) []clonePod {
	var out []clonePod
	for i := range old {
		out = append(out, clonePod{name: fmt.Sprintf("o%d", i), available: i < availableOld})
	}
	for i := range updated {
		out = append(out, clonePod{name: fmt.Sprintf("u%d", i), updated: true, available: i < availableUpdated})
	}
	return out
}

func TestPlanCloneSet(t *testing.T) {
	tests := []struct {
		name string
		in   cloneSetInput
		want cloneSetPlan
	}{
		{
			name: "at rest nothing changes",
			in:   cloneSetInput{replicas: 4, expected: 4, unavailable: 1, pods: pods(0, 0, 4, 4)},
			want: cloneSetPlan{},
		},
		{
			name: "no surge: old pods are replaced within maxUnavailable",
			in:   cloneSetInput{replicas: 4, expected: 4, unavailable: 2, pods: pods(4, 4, 0, 0)},
			want: cloneSetPlan{remove: []string{"o0", "o1"}, createUpdated: 2},
		},
		{
			name: "the partition keeps old pods",
			in:   cloneSetInput{replicas: 4, expected: 1, unavailable: 2, pods: pods(4, 4, 0, 0)},
			want: cloneSetPlan{remove: []string{"o0"}, createUpdated: 1},
		},
		{
			name: "unavailable old pods go first",
			in:   cloneSetInput{replicas: 4, expected: 1, unavailable: 2, pods: pods(4, 3, 0, 0)},
			want: cloneSetPlan{remove: []string{"o3"}, createUpdated: 1},
		},
		{
			name: "surge: new pods first, no old pod goes while none is spare",
			in:   cloneSetInput{replicas: 4, expected: 4, surge: 1, pods: pods(4, 4, 0, 0)},
			want: cloneSetPlan{createUpdated: 1},
		},
		{
			name: "surge: an old pod goes once a new one is available",
			in:   cloneSetInput{replicas: 4, expected: 4, surge: 1, pods: pods(4, 4, 1, 1)},
			want: cloneSetPlan{remove: []string{"o0"}, createUpdated: 1},
		},
		{
			name: "blue-green: maxSurge new pods beside every old one, none available",
			in:   cloneSetInput{replicas: 4, expected: 4, surge: 2, pods: pods(4, 0, 0, 0)},
			want: cloneSetPlan{createUpdated: 2},
		},
		{
			name: "blue-green: placed, nothing moves",
			in:   cloneSetInput{replicas: 4, expected: 4, surge: 2, pods: pods(4, 0, 2, 0)},
			want: cloneSetPlan{},
		},
		{
			name: "blue-green: a larger maxSurge adds new pods",
			in:   cloneSetInput{replicas: 4, expected: 4, surge: 4, pods: pods(4, 0, 2, 0)},
			want: cloneSetPlan{createUpdated: 2},
		},
		{
			name: "handed back: the old pods go as far as maxUnavailable allows",
			in:   cloneSetInput{replicas: 4, expected: 4, unavailable: 2, pods: pods(4, 4, 4, 4)},
			want: cloneSetPlan{remove: []string{"o0", "o1", "o2", "o3"}},
		},
		{
			name: "rollback handed back: the pods of the abandoned revision go",
			in:   cloneSetInput{replicas: 4, expected: 4, unavailable: 2, pods: pods(2, 2, 4, 4)},
			want: cloneSetPlan{remove: []string{"o0", "o1"}},
		},
		{
			name: "held at 100%: no pod changes",
			in:   cloneSetInput{replicas: 4, expected: 0, surge: 2, pods: pods(4, 0, 2, 0)},
			want: cloneSetPlan{},
		},
		{
			name: "paused: no pod is updated, missing ones come back on the current revision",
			in:   cloneSetInput{replicas: 4, expected: 4, unavailable: 2, paused: true, pods: pods(3, 3, 0, 0)},
			want: cloneSetPlan{createCurrent: 1},
		},
		{
			name: "scaled down: pods above replicas go",
			in:   cloneSetInput{replicas: 2, expected: 2, unavailable: 1, pods: pods(0, 0, 4, 4)},
			want: cloneSetPlan{remove: []string{"u0", "u1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planCloneSet(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("planCloneSet() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
