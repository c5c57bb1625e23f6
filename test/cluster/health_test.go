package cluster

import (
	"slices"
	"testing"
)

func TestFailingChecks(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{name: "all pass", body: "[+]ping ok\n[+]etcd ok\nreadyz check passed\n", want: nil},
		{
			name: "two failing",
			body: "[+]ping ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n[-]etcd failed: reason withheld\nreadyz check failed",
			want: []string{"poststarthook/rbac/bootstrap-roles", "etcd"},
		},
		{name: "not a check list", body: "connection refused", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failingChecks([]byte(tt.body)); !slices.Equal(got, tt.want) {
				t.Errorf("failingChecks() = %q, want %q", got, tt.want)
			}
		})
	}
}
