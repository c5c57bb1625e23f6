// Package metricsapi is a small resource metrics API server for tests: it
// serves metrics.k8s.io/v1beta1 pod metrics (the API the
// HorizontalPodAutoscaler reads) for the pods of a local cluster, with the
// memory and CPU usage a test sets per namespace, and registers itself with
// kube-apiserver's aggregation layer through an APIService.
//
// kube-apiserver reaches it at the endpoint of a Service without selector,
// on this machine's first non-loopback IPv4 address (Kubernetes refuses
// loopback endpoints), so the cluster must route aggregated APIs to
// endpoints, as test/cluster does (--enable-aggregator-routing).
package metricsapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Group and version served, and where the Service registering it lives.
const (
	Group     = "metrics.k8s.io"
	Version   = "v1beta1"
	namespace = "kube-system"
	service   = "sluice-test-metrics"
	portName  = "https"
)

// window is the metrics window reported: short, so that a pod that just
// became ready has a usable sample at once.
const window = time.Second

// Usage is the resource usage reported for every container of a pod.
type Usage struct {
	CPU, Memory resource.Quantity
}

// Server serves pod metrics. Its methods are safe for concurrent use.
type Server struct {
	c      client.Client
	srv    *http.Server
	ln     net.Listener
	host   string
	mu     sync.Mutex
	usage  map[string]Usage // by namespace
	served int              // pod metrics lists served, for tests waiting on the HPA
}

// Start serves pod metrics of the pods c lists, on this machine's address,
// and registers the APIService v1beta1.metrics.k8s.io with c. It returns
// once kube-apiserver reports the APIService Available. Stop undoes it.
func Start(ctx context.Context, c client.Client) (*Server, error) {
	host, err := hostAddress()
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(host, []net.IP{net.ParseIP(host)}, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics API serving certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", net.JoinHostPort(host, "0"), &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("metrics API listening on %s: %w", host, err)
	}
	s := &Server{c: c, ln: ln, host: host, usage: map[string]Usage{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/apis", s.groups)
	mux.HandleFunc("/apis/"+Group, s.group)
	mux.HandleFunc("/apis/"+Group+"/"+Version, s.resources)
	mux.HandleFunc("/apis/"+Group+"/"+Version+"/namespaces/{namespace}/pods", s.podMetrics)
	mux.HandleFunc("/apis/"+Group+"/"+Version+"/pods", s.podMetrics)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	if err := s.register(ctx); err != nil {
		return nil, errors.Join(err, s.Stop(context.WithoutCancel(ctx)))
	}
	return s, nil
}

// SetUsage makes every container of every pod in ns report u.
func (s *Server) SetUsage(ns string, u Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage[ns] = u
}

// Served is how many pod metrics lists were served.
func (s *Server) Served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

// Stop removes the APIService and its Service and stops serving.
func (s *Server) Stop(ctx context.Context) error {
	apiService := &unstructured.Unstructured{}
	apiService.SetAPIVersion("apiregistration.k8s.io/v1")
	apiService.SetKind("APIService")
	apiService.SetName(Version + "." + Group)
	var errs []error
	for _, o := range []client.Object{
		apiService,
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: service}},
		&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: service}}, //nolint:staticcheck // see register
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: service}},
	} {
		if err := s.c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.srv.Close())
	return errors.Join(errs...)
}

// register creates the Service, its endpoint (this server) and the
// APIService, and waits until kube-apiserver finds it available.
func (s *Server) register(ctx context.Context) error {
	port := int32(s.ln.Addr().(*net.TCPAddr).Port)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: service},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: portName, Port: 443, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP,
		}}},
	}
	// Both the Endpoints (not mirrored: the slice below is the same) and
	// the EndpointSlice, whichever kube-apiserver's aggregator resolves.
	eps := &corev1.Endpoints{ //nolint:staticcheck // the aggregator of some versions reads Endpoints
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: service, Labels: map[string]string{"endpointslice.kubernetes.io/skip-mirror": "true"}},
		Subsets: []corev1.EndpointSubset{{ //nolint:staticcheck // as above
			Addresses: []corev1.EndpointAddress{{IP: s.host}},
			Ports:     []corev1.EndpointPort{{Name: portName, Port: port, Protocol: corev1.ProtocolTCP}},
		}},
	}
	name, proto, ready := portName, corev1.ProtocolTCP, true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: service, Labels: map[string]string{
			discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: "sluice-test-metrics",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{s.host}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": Version + "." + Group},
		"spec": map[string]any{
			"group": Group, "version": Version, "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"namespace": namespace, "name": service, "port": int64(443)},
		},
	}}
	for _, o := range []client.Object{svc, eps, slice, apiService} {
		if err := s.c.Create(ctx, o); err != nil {
			return fmt.Errorf("registering the metrics API: creating %T %s: %w", o, o.GetName(), err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got := &unstructured.Unstructured{}
		got.SetAPIVersion("apiregistration.k8s.io/v1")
		got.SetKind("APIService")
		err := s.c.Get(ctx, client.ObjectKey{Name: Version + "." + Group}, got)
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Available" && m["status"] == "True" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("APIService %s.%s not Available after a minute (err %v, conditions %v): kube-apiserver must route aggregated APIs to endpoints (--enable-aggregator-routing) and reach %s",
				Version, Group, err, conds, s.ln.Addr())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) groups(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   []metav1.APIGroup{apiGroup()},
	})
}

func (s *Server) group(w http.ResponseWriter, _ *http.Request) {
	g := apiGroup()
	g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	writeJSON(w, g)
}

func apiGroup() metav1.APIGroup {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: Group + "/" + Version, Version: Version}
	return metav1.APIGroup{Name: Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
}

func (s *Server) resources(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: Group + "/" + Version,
		APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: []string{"get", "list"}},
		},
	})
}

// podMetrics answers a list of pod metrics (what the HPA asks for, with
// a label selector) from the live pods: Running ones on a node, each
// container with the usage of its namespace.
func (s *Server) podMetrics(w http.ResponseWriter, r *http.Request) {
	sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
	if ns := r.PathValue("namespace"); ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	pods := &corev1.PodList{}
	if err := s.c.List(r.Context(), pods, opts...); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	usage := make(map[string]Usage, len(s.usage))
	for k, v := range s.usage {
		usage[k] = v
	}
	s.served++
	s.mu.Unlock()
	now := metav1.Now()
	items := []map[string]any{}
	for _, p := range pods.Items {
		u, ok := usage[p.Namespace]
		if !ok || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		var containers []map[string]any
		for _, c := range p.Spec.Containers {
			containers = append(containers, map[string]any{"name": c.Name, "usage": map[string]string{"cpu": u.CPU.String(), "memory": u.Memory.String()}})
		}
		items = append(items, map[string]any{
			"metadata":   map[string]any{"name": p.Name, "namespace": p.Namespace, "labels": p.Labels, "creationTimestamp": now},
			"timestamp":  now,
			"window":     window.String(),
			"containers": containers,
		})
	}
	writeJSON(w, map[string]any{
		"kind": "PodMetricsList", "apiVersion": Group + "/" + Version,
		"metadata": map[string]any{"resourceVersion": strconv.FormatInt(now.UnixNano(), 10)},
		"items":    items,
	})
}

// hostAddress is this machine's first non-loopback, non-link-local IPv4
// address.
func hostAddress() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("listing this machine's addresses: %w", err)
	}
	var seen []string
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		seen = append(seen, n.IP.String())
		if ip := n.IP.To4(); ip != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
			return ip.String(), nil
		}
	}
	return "", fmt.Errorf("the metrics API needs a non-loopback IPv4 address on this machine for kube-apiserver to reach it (Kubernetes refuses loopback endpoints); found only %s: bring up a network interface (for example: ip link add dummy0 type dummy && ip addr add 192.0.2.2/24 dev dummy0 && ip link set dummy0 up)",
		strings.Join(seen, ", "))
}
