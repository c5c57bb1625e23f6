package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sluice-dev/sluice/test/env"
)

// managerSide is what the scenarios measure of the sluice manager: its API
// requests, its controllers' metrics, and the memory and CPU of the process
// it runs in. inProcess measures a manager in the benchmark's own process;
// apart one the benchmark started as a process of its own
// (--manager-process), whose memory and CPU are then the manager's alone.
type managerSide interface {
	// openWindow clears the request counts and starts counting.
	openWindow()
	// snapshot returns the request counts so far.
	snapshot() map[requestKey]requestStat
	// mark lines the request log up with the scenario (--log-requests).
	mark(at time.Time, what string)
	// controllerMetrics reads every controller's reconcile and work-queue
	// metrics.
	controllerMetrics() (metricValues, error)
	// queueDepths reads how many items wait in each work queue now.
	queueDepths() map[string]float64
	// memory takes one reading of the process's memory.
	memory() memoryUse
	// peakRSS is the kernel's high-water mark of the process's resident set.
	peakRSS() uint64
	// cpuSeconds is the CPU time the process has used so far.
	cpuSeconds() float64
	// process says whose memory and CPU the figures are.
	process() string
}

// inProcess is a manager running in this process.
type inProcess struct{ counter *requestCounter }

func (m inProcess) openWindow()                          { m.counter.openWindow() }
func (m inProcess) snapshot() map[requestKey]requestStat { return m.counter.snapshot() }
func (m inProcess) mark(at time.Time, what string)       { m.counter.mark(at, what) }
func (inProcess) controllerMetrics() (metricValues, error) {
	return readControllerMetrics()
}
func (inProcess) queueDepths() map[string]float64 { return readQueueDepths() }
func (inProcess) memory() memoryUse               { return readMemory() }
func (inProcess) peakRSS() uint64                 { return peakResidentBytes() }
func (inProcess) cpuSeconds() float64             { return cpuSeconds() }
func (inProcess) process() string {
	return "the benchmark's process, which runs the sluice manager together with the benchmark's own client and watches"
}

// The paths a manager process answers the benchmark on (serveManager).
const (
	pathOpenWindow = "/open-window"
	pathSnapshot   = "/snapshot"
	pathMark       = "/mark"
	pathMetrics    = "/controller-metrics"
	pathDepths     = "/queue-depths"
	pathMemory     = "/memory"
	pathPeakRSS    = "/peak-rss"
	pathCPU        = "/cpu"
)

// countEntry is one entry of a snapshot as JSON carries it (a map keyed by
// a struct cannot be).
type countEntry struct {
	Key  requestKey  `json:"key"`
	Stat requestStat `json:"stat"`
}

// serveManager is the benchmark run as the manager's process
// (--serve-manager): it starts the sluice manager against the control plane
// of kubeconfig, answers the benchmark's questions on addr, and stops the
// manager when ctx ends (the benchmark's SIGTERM, or its death: the
// process is started with a parent-death signal).
func serveManager(ctx context.Context, addr, kubeconfig string, logger logr.Logger, requestLog io.Writer) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	// No client-side rate limit, as the sluice binary runs (ctrl.GetConfig
	// leaves the API server's priority and fairness to decide): client-go's
	// default of 5 requests a second would make the manager wait on
	// itself.
	cfg.QPS = -1
	counter := newRequestCounter(requestLog)
	m, err := env.StartManager(ctx, cfg, env.ManagerOptions{Name: "sluice-bench", Logger: logger, WrapTransport: counter.wrap})
	if err != nil {
		return err
	}
	side := inProcess{counter: counter}
	answer := func(v any) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(v) }
	}
	mux := http.NewServeMux()
	mux.HandleFunc(pathOpenWindow, func(w http.ResponseWriter, _ *http.Request) { side.openWindow(); w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc(pathSnapshot, func(w http.ResponseWriter, r *http.Request) {
		var out []countEntry
		for k, v := range side.snapshot() {
			out = append(out, countEntry{Key: k, Stat: v})
		}
		answer(out)(w, r)
	})
	mux.HandleFunc(pathMark, func(w http.ResponseWriter, r *http.Request) {
		at, _ := time.Parse(time.RFC3339Nano, r.URL.Query().Get("at"))
		side.mark(at, r.URL.Query().Get("what"))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc(pathMetrics, func(w http.ResponseWriter, r *http.Request) {
		v, err := side.controllerMetrics()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		answer(v)(w, r)
	})
	mux.HandleFunc(pathDepths, func(w http.ResponseWriter, r *http.Request) { answer(side.queueDepths())(w, r) })
	mux.HandleFunc(pathMemory, func(w http.ResponseWriter, r *http.Request) { answer(side.memory())(w, r) })
	mux.HandleFunc(pathPeakRSS, func(w http.ResponseWriter, r *http.Request) { answer(side.peakRSS())(w, r) })
	mux.HandleFunc(pathCPU, func(w http.ResponseWriter, r *http.Request) { answer(side.cpuSeconds())(w, r) })
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	select {
	case err = <-served:
	case <-ctx.Done():
		_ = srv.Close()
	}
	return errors.Join(err, m.Stop())
}

// apart is a manager in a process of its own, started by startApart.
type apart struct {
	base string
	cmd  *exec.Cmd
	done chan struct{}
	// log holds the process's standard error; read it once done is closed.
	log strings.Builder
}

// startApart starts this benchmark's own binary as the manager's process
// against the control plane of kubeconfig and waits until the manager is
// ready (its webhooks registered and served).
func startApart(ctx context.Context, kubeconfig string, managerLog, logRequests bool, stderr io.Writer) (*apart, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	args := []string{"--serve-manager", "127.0.0.1:" + strconv.Itoa(port), "--kubeconfig", kubeconfig}
	if managerLog {
		args = append(args, "--manager-log")
	}
	if logRequests {
		args = append(args, "--log-requests")
	}
	a := &apart{base: "http://127.0.0.1:" + strconv.Itoa(port), done: make(chan struct{})}
	a.cmd = exec.Command(self, args...) //nolint:gosec // this very binary
	a.cmd.Stdout = stderr
	a.cmd.Stderr = &a.log // the logs asked for are shown too
	if managerLog || logRequests {
		a.cmd.Stderr = io.MultiWriter(stderr, &a.log)
	}
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the manager's process: %w", err)
	}
	go func() {
		_ = a.cmd.Wait()
		close(a.done)
	}()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-a.done:
			return false, fmt.Errorf("the manager's process exited: %s", a.log.String())
		default:
		}
		_, err := answerOf[float64](a, pathCPU)
		return err == nil, nil
	})
	if err != nil {
		a.stop()
		return nil, err
	}
	return a, nil
}

// stop ends the manager's process with SIGTERM (SIGKILL after 30 s) and
// waits for it.
func (a *apart) stop() {
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// get asks the manager's process path and decodes its answer into v.
func (a *apart) get(path string, v any) error {
	resp, err := http.Get(a.base + path) //nolint:noctx // loopback, with the process's own life as bound
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s %s", path, resp.Status, b)
	}
	if v == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func (*apart) process() string { return "the sluice manager's own process (--manager-process)" }

func (a *apart) openWindow() { _ = a.get(pathOpenWindow, nil) }

func (a *apart) snapshot() map[requestKey]requestStat {
	var entries []countEntry
	_ = a.get(pathSnapshot, &entries)
	out := make(map[requestKey]requestStat, len(entries))
	for _, e := range entries {
		out[e.Key] = e.Stat
	}
	return out
}

func (a *apart) mark(at time.Time, what string) {
	_ = a.get(pathMark+"?"+url.Values{"at": {at.Format(time.RFC3339Nano)}, "what": {what}}.Encode(), nil)
}

func (a *apart) controllerMetrics() (metricValues, error) {
	return answerOf[metricValues](a, pathMetrics)
}

func (a *apart) queueDepths() map[string]float64 {
	v, _ := answerOf[map[string]float64](a, pathDepths)
	return v
}

func (a *apart) memory() memoryUse {
	v, _ := answerOf[memoryUse](a, pathMemory)
	return v
}

func (a *apart) peakRSS() uint64 {
	v, _ := answerOf[uint64](a, pathPeakRSS)
	return v
}

func (a *apart) cpuSeconds() float64 {
	v, _ := answerOf[float64](a, pathCPU)
	return v
}

// answerOf is a's answer to path, decoded as a T.
func answerOf[T any](a *apart, path string) (T, error) {
	var v T
	err := a.get(path, &v)
	return v, err
}
