package dataplane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// gatewayClassName is the GatewayClass every Gateway of the tests uses;
// Traefik's Gateway API provider serves the classes naming its controller.
const (
	gatewayClassName  = "traefik"
	gatewayController = "traefik.io/gateway-controller"
	gatewayName       = "public"
)

// gatewayCRDs are the standard-channel CRDs the proxy watches, from the
// sigs.k8s.io/gateway-api module sluice is built with.
var gatewayCRDs = []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "referencegrants", "backendtlspolicies"}

// installGatewayAPI installs gatewayCRDs and the GatewayClass.
func installGatewayAPI(ctx context.Context, c client.Client) error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return fmt.Errorf("locating the gateway-api module: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	for _, name := range gatewayCRDs {
		raw, err := os.ReadFile(filepath.Join(dir, "gateway.networking.k8s.io_"+name+".yaml"))
		if err != nil {
			return err
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
			return fmt.Errorf("reading the %s CRD: %w", name, err)
		}
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the %s CRD: %w", name, err)
		}
	}
	class := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": gatewayClassName},
		"spec":     map[string]any{"controllerName": gatewayController},
	}}
	// The CRDs take a moment to be served: retry until the class is created.
	return retry(ctx, func() error {
		err := c.Create(ctx, class)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// gateway creates the Gateway "public" in ns, listening for plain HTTP on
// the proxy's entry-point port.
func gateway(t *testing.T, ns string) {
	t.Helper()
	create(t, map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"namespace": ns, "name": gatewayName},
		"spec": map[string]any{
			"gatewayClassName": gatewayClassName,
			"listeners": []any{map[string]any{
				"name": "http", "protocol": "HTTP", "port": int64(suite.proxy.port),
			}},
		},
	})
}

// httpRoute creates the HTTPRoute name sending hostOf(ns)/ to port 80 of
// the Service svc, through the Gateway "public".
func httpRoute(t *testing.T, ns, name, svc string) {
	t.Helper()
	create(t, map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": gatewayName}},
			"hostnames":  []any{hostOf(ns)},
			"rules": []any{map[string]any{
				"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
				"backendRefs": []any{map[string]any{"name": svc, "port": int64(80)}},
			}},
		},
	})
}

// service creates the Service name selecting app=name, port 80 to the
// pods' podPort.
func service(t *testing.T, ns, name string) {
	t.Helper()
	create(t, map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"selector": map[string]any{"app": name},
			"ports":    []any{map[string]any{"name": "http", "port": int64(80), "targetPort": int64(podPort)}},
		},
	})
}

func create(t *testing.T, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	if err := suite.c.Create(ctxFor(t), u); err != nil {
		t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// hostOf is the host name the routes of namespace ns match: every scenario
// has its own, because Traefik serves the Gateways of all namespaces on the
// one entry point.
func hostOf(ns string) string { return ns + ".example" }
