package partition

import "testing"

func TestOrdinalPartition(t *testing.T) {
	tests := []struct {
		name     string
		n        int32
		desired  int32
		onUpdate []int32
		want     int32
	}{
		{name: "a release: the partition is replicas minus the batch", n: 6, desired: 2, want: 4},
		{name: "nothing to release", n: 6, desired: 0, want: 6},
		{name: "everything", n: 6, desired: 6, want: 0},
		{name: "pods already on the update revision are kept, not released again", n: 6, desired: 2, onUpdate: []int32{4, 5}, want: 6},
		{name: "pods at or above the partition count once", n: 6, desired: 3, onUpdate: []int32{4, 5}, want: 3},
		{name: "rollback step 1: 3 low ordinals already on the target", n: 6, desired: 4, onUpdate: []int32{0, 1, 2}, want: 5},
		{name: "rollback step 2", n: 6, desired: 5, onUpdate: []int32{0, 1, 2, 5}, want: 4},
		{name: "rollback last step stops above the pods already on it", n: 6, desired: 6, onUpdate: []int32{0, 1, 2, 4, 5}, want: 3},
		{name: "pods on the target not at the lowest ordinals", n: 4, desired: 3, onUpdate: []int32{1}, want: 2},
		{name: "more desired than pods", n: 3, desired: 5, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ordinalPartition(tt.n, tt.desired, tt.onUpdate); got != tt.want {
				t.Errorf("ordinalPartition(%d, %d, %v) = %d, want %d", tt.n, tt.desired, tt.onUpdate, got, tt.want)
			}
		})
	}
}

func TestOrdinalOf(t *testing.T) {
	tests := []struct {
		pod    string
		want   int32
		wantOK bool
	}{
		{pod: "app-0", want: 0, wantOK: true},
		{pod: "app-12", want: 12, wantOK: true},
		{pod: "app-x", wantOK: false},
		{pod: "other-1", wantOK: false},
		{pod: "app-web-1", wantOK: false},
		{pod: "app--1", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.pod, func(t *testing.T) {
			got, ok := ordinalOf("app", tt.pod)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ordinalOf(app, %s) = %d, %v, want %d, %v", tt.pod, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
