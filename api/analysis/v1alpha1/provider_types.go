package v1alpha1

import (
	"github.com/fluxcd/pkg/apis/meta"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Template variables: queries, URLs, bodies and header values may name them
// as ${name}, and the analysis replaces them with what the Rollout's status
// says when the measurement is taken; $${ writes a literal ${. A Job gets
// them as environment variables of each container (SLUICE_ + the name in
// upper snake case, e.g. SLUICE_CANARY_SERVICE).
const (
	// VarNamespace is the Rollout's namespace.
	VarNamespace = "namespace"
	// VarRollout is the Rollout's name.
	VarRollout = "rollout"
	// VarCanaryRevision is the revision being released, as its pods are
	// labelled (pod-template-hash for a Deployment).
	VarCanaryRevision = "canaryRevision"
	// VarStableRevision is the revision being replaced.
	VarStableRevision = "stableRevision"
	// VarCanaryService is the Service that reaches the new revision's pods
	// (the stable Service's name with -canary, unless the Rollout disables
	// it), from the Rollout's first trafficRoutings entry.
	VarCanaryService = "canaryService"
	// VarStableService is the Service of the Rollout's first
	// trafficRoutings entry.
	VarStableService = "stableService"
	// VarStep is the step being analysed, from 1; 0 for a background
	// analysis.
	VarStep = "step"
)

// PrometheusMetric runs an instant PromQL query against the Prometheus
// HTTP API (<address>/api/v1/query). The result is a number for a scalar
// or a vector of one sample, and a list of numbers for a vector of
// several. A vector of no sample (nothing matched yet) is an Error
// measurement; "or vector(0)" makes it 0.
type PrometheusMetric struct {
	// Address is the base URL of the Prometheus server, e.g.
	// http://prometheus.monitoring:9090.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="spec.metrics[].provider.prometheus.address must be an http(s) URL"
	// +required
	Address string `json:"address"`
	// Query is the PromQL expression; template variables are replaced.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	// +required
	Query string `json:"query"`
	// SecretRef names a Secret of the MetricGate's namespace with the
	// credentials: "bearerToken", or "username" and "password"; "ca.crt"
	// adds certificates to trust for HTTPS.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`
	// Timeout bounds the query.
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout metav1.Duration `json:"timeout,omitempty"`
}

// WebMetric calls an HTTP endpoint; the answer must be a 2xx with a JSON
// body, and the result is the value JSONPath selects in it.
//
// +kubebuilder:validation:XValidation:rule="!has(self.body) || self.method == 'POST'",message="spec.metrics[].provider.web.body needs method POST"
type WebMetric struct {
	// URL called; template variables are replaced.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="spec.metrics[].provider.web.url must be an http(s) URL"
	// +required
	URL string `json:"url"`
	// Method is GET or POST.
	// +kubebuilder:validation:Enum=GET;POST
	// +kubebuilder:default=GET
	// +optional
	Method string `json:"method,omitempty"`
	// Body sent with POST; template variables are replaced.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Body string `json:"body,omitempty"`
	// JSONPath selects the result in the JSON answer, in kubectl's JSONPath
	// syntax (https://kubernetes.io/docs/reference/kubectl/jsonpath/), e.g.
	// "{.data.errorRate}"; a path that selects several values gives a list.
	// Empty: the whole answer is the result.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	JSONPath string `json:"jsonPath,omitempty"`
	// Headers sent with the request; template variables are replaced in
	// their values.
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=name
	// +optional
	Headers []HTTPHeader `json:"headers,omitempty"`
	// HeadersSecretRef names a Secret of the MetricGate's namespace whose
	// every key is sent as a header with its value (e.g. Authorization),
	// after Headers.
	// +optional
	HeadersSecretRef *meta.LocalObjectReference `json:"headersSecretRef,omitempty"`
	// Timeout bounds the request.
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout metav1.Duration `json:"timeout,omitempty"`
}

// HTTPHeader is a header of a web metric's request.
type HTTPHeader struct {
	// Name of the header.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern="^[A-Za-z0-9!#$%&'*+.^_`|~-]+$"
	// +required
	Name string `json:"name"`
	// Value of the header.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Value string `json:"value,omitempty"`
}

// JobMetric runs a Job made from a template in the Rollout's namespace,
// owned by the MetricGate, for each measurement. The result is true when
// the Job completed and false when it failed; without conditions a
// completed Job is a Successful measurement and a failed one a Failed one.
// Each container gets the template variables as environment variables.
type JobMetric struct {
	// Metadata are labels and annotations given to each Job.
	// +optional
	Metadata JobMetadata `json:"metadata,omitempty"`
	// Spec is the Job's spec (batch/v1 JobSpec). Its pod template's
	// restartPolicy must be Never or OnFailure.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +required
	Spec batchv1.JobSpec `json:"spec"`
}

// JobMetadata are the labels and annotations of a metric's Jobs.
type JobMetadata struct {
	// Labels added to each Job (sluice adds its own beside them).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations added to each Job.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}
