package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// probeTimeout bounds one readiness probe, so a process that accepts
// connections but hangs does not stall the wait past its deadline.
const probeTimeout = 2 * time.Second

// etcdHealthy reports whether etcd at url answers its health endpoint.
func etcdHealthy(url string) condition {
	client := &http.Client{Timeout: probeTimeout}
	return func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", http.NoBody)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if err != nil {
			return false, fmt.Errorf("reading etcd health: %w", err)
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
			return false, fmt.Errorf("etcd health: %s: %s", resp.Status, body)
		}
		return true, nil
	}
}

// apiserverReady reports whether kube-apiserver's /readyz passes: storage
// reachable, bootstrap RBAC policy and priority classes in place.
func apiserverReady(cfg *rest.Config) condition {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = probeTimeout
	var cs kubernetes.Interface
	return func(ctx context.Context) (bool, error) {
		if cs == nil {
			var err error
			if cs, err = kubernetes.NewForConfig(cfg); err != nil {
				return false, fmt.Errorf("creating client: %w", err)
			}
		}
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			return true, nil
		}
		if failing := failingChecks(body); len(failing) > 0 {
			return false, fmt.Errorf("/readyz: failing %s", strings.Join(failing, ", "))
		}
		return false, fmt.Errorf("GET /readyz: %w", err)
	}
}

// failingChecks returns the names of the failing checks in a verbose
// /readyz or /healthz answer, whose lines read "[-]name failed: reason".
func failingChecks(body []byte) []string {
	var failing []string
	for _, line := range strings.Split(string(body), "\n") {
		check, ok := strings.CutPrefix(line, "[-]")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(check, " ")
		failing = append(failing, name)
	}
	return failing
}
