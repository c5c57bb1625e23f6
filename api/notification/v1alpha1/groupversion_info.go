// Package v1alpha1 contains the notification.sluice.dev/v1alpha1 API:
// Notifier, which sends the transitions of the releases of the Rollouts it
// binds (release started, step paused, approved, analysis failed, aborted,
// rolled back, completed) to HTTP sinks: a generic signed JSON webhook or a
// Slack-compatible incoming webhook.
//
// +kubebuilder:object:generate=true
// +groupName=notification.sluice.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "notification.sluice.dev", Version: "v1alpha1"}

// AddToScheme registers the kinds of this API with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Notifier{}, &NotifierList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
