package dataplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/test/cluster"
)

// EnvProxyBinary names the environment variable that points at a prebuilt
// sluice-dataplane binary; when unset, hack/dataplane/build.sh builds it
// into the cache (minutes the first time, nothing afterwards).
const EnvProxyBinary = "SLUICE_DATAPLANE_BIN"

// proxyBuildScript is the build script's path relative to the module root.
const proxyBuildScript = "hack/dataplane/build.sh"

// proxy is the running data-plane proxy.
type proxy struct {
	// port is the port of its one entry point on 127.0.0.1; the Gateways'
	// listeners use the same port.
	port   int
	client *http.Client
	// logPath is the proxy's log file.
	logPath string
}

// logTail returns the last n lines of the proxy's log.
func (p *proxy) logTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startProxy builds (or finds) sluice-dataplane and runs it against the
// cluster, logging to Dir/logs/sluice-dataplane.log. It dies with the test
// binary.
func startProxy(ctx context.Context, c *cluster.Cluster) (*proxy, error) {
	bin, err := proxyBinary(ctx)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(c.Dir(), "logs", "sluice-dataplane.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	level := "info"
	if os.Getenv("SLUICE_TEST_LOG") != "" {
		level = "debug"
	}
	cmd := exec.Command(bin, "-address", "127.0.0.1:"+strconv.Itoa(port), "-log-level", level)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.KubeconfigPath())
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { _ = cmd.Wait(); _ = logFile.Close() }()
	return &proxy{
		port:    port,
		client:  &http.Client{Timeout: 5 * time.Second},
		logPath: logPath,
	}, nil
}

// proxyBinary returns $SLUICE_DATAPLANE_BIN, or the binary the build script
// builds, finding the script from the package directory (go test runs in
// test/dataplane).
func proxyBinary(ctx context.Context) (string, error) {
	if bin := os.Getenv(EnvProxyBinary); bin != "" {
		return bin, nil
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(root, proxyBuildScript))
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("running %s (or set %s): %w", proxyBuildScript, EnvProxyBinary, err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := lines[len(lines)-1]
	if dir == "" {
		return "", errors.New(proxyBuildScript + " printed no directory")
	}
	return filepath.Join(dir, "sluice-dataplane"), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// send sends n requests for http://<host>/ through the proxy, with the
// given request headers, and counts the answers: by the image of the
// pod that answered, or by "HTTP <code>" / "error" when no pod did.
func (p *proxy) send(ctx context.Context, host string, n int, headers map[string]string) map[string]int {
	counts := map[string]int{}
	url := "http://127.0.0.1:" + strconv.Itoa(p.port) + "/"
	for range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
		if err != nil {
			counts["error"]++
			continue
		}
		req.Host = host
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := p.client.Do(req)
		if err != nil {
			counts["error"]++
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			counts["HTTP "+strconv.Itoa(resp.StatusCode)]++
			continue
		}
		counts[string(body)]++
	}
	return counts
}
