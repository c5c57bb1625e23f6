// Package v1 is a fixture for the apidocs tests.
//
// +groupName=example.sluice.dev
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is a fixture kind.
//
// +kubebuilder:object:root=true
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is what the widget should be.
	Spec WidgetSpec `json:"spec"`
}

// WidgetList lists widgets.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	Items           []Widget `json:"items"`
}

// WidgetSpec describes a widget.
type WidgetSpec struct {
	// Size is how big | how wide.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=3
	Size int32 `json:"size"`
	// Color is the colour.
	// +optional
	Color    *Color `json:"color,omitempty"`
	internal string
}

// Color is a colour.
type Color string

// The colours.
const (
	// Red is red.
	Red Color = "red"
	// Blue is blue.
	Blue Color = "blue"
)
