package dynamicwatch

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDynamic(t *testing.T) {
	tests := []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, false},
		{schema.GroupVersionKind{Group: "", Version: "v1", Kind: "Pod"}, false},
		{schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}, true},
		{schema.GroupVersionKind{Group: "games.example.com", Version: "v1", Kind: "GameServerSet"}, true},
		{schema.GroupVersionKind{Group: "games.example.com", Version: "", Kind: "GameServerSet"}, false},
	}
	for _, tt := range tests {
		if got := Dynamic(tt.gvk); got != tt.want {
			t.Errorf("Dynamic(%s) = %v, want %v", tt.gvk, got, tt.want)
		}
	}
}
