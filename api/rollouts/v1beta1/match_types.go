package v1beta1

// The request-matching types below have the JSON shape of the Gateway API
// types OpenKruise Rollouts embeds (HTTPPathMatch, HTTPHeaderMatch,
// HTTPQueryParamMatch, HTTPHeaderFilter), so the same manifests apply; they
// carry their own, lighter validation.

// MatchType is how a value is compared.
//
// +kubebuilder:validation:Enum=Exact;PathPrefix;RegularExpression
type MatchType string

// The match types.
const (
	// MatchExact compares the whole value.
	MatchExact MatchType = "Exact"
	// MatchPathPrefix matches a path prefix, by path elements.
	MatchPathPrefix MatchType = "PathPrefix"
	// MatchRegularExpression matches a regular expression.
	MatchRegularExpression MatchType = "RegularExpression"
)

// HTTPPathMatch matches the request path.
type HTTPPathMatch struct {
	// Type is Exact, PathPrefix (the default) or RegularExpression.
	// +optional
	Type *MatchType `json:"type,omitempty"`
	// Value is the path to match, e.g. /api.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value *string `json:"value,omitempty"`
}

// HTTPHeaderMatch matches one request header.
type HTTPHeaderMatch struct {
	// Type is Exact (the default) or RegularExpression.
	// +optional
	// +kubebuilder:validation:Enum=Exact;RegularExpression
	Type *MatchType `json:"type,omitempty"`
	// Name is the header name, compared case-insensitively.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	Name string `json:"name"`
	// Value is the header value to match.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value"`
}

// HTTPQueryParamMatch matches one query parameter.
type HTTPQueryParamMatch struct {
	// Type is Exact (the default) or RegularExpression.
	// +optional
	// +kubebuilder:validation:Enum=Exact;RegularExpression
	Type *MatchType `json:"type,omitempty"`
	// Name is the query parameter name, compared exactly.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// Value is the query parameter value to match.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`
}

// HTTPHeader is a header name and value.
type HTTPHeader struct {
	// Name is the header name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	Name string `json:"name"`
	// Value is the header value.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value"`
}

// HTTPHeaderFilter changes request headers.
type HTTPHeaderFilter struct {
	// Set overwrites headers.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Set []HTTPHeader `json:"set,omitempty"`
	// Add appends headers.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Add []HTTPHeader `json:"add,omitempty"`
	// Remove deletes headers by name.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	Remove []string `json:"remove,omitempty"`
}
