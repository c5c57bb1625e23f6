// Command bench is sluice's benchmark seed (make bench). On a local control
// plane it releases a new image to many Deployments at once, each through
// its own Rollout of steps 1 / 50% / 100% with zero-duration pauses, and
// prints how long each release took from the image change to Completed,
// how many writes the sluice manager sent to the API server per release,
// and the peak Go memory of the process that runs the manager. It also
// reports the manager's reads, the latency of each kind of request and how
// busy each controller was, which is where slowness usually shows first.
//
//	go run ./test/bench [--rollouts 10] [--replicas 10] [--json]
//
// --scenario=gitops runs the GitOps scenario instead (make bench-gitops):
// --rollouts Rollouts (default 100 there) bound to one GitGate, their
// commits in --prs pull requests, each paused at step 1; it delivers the
// label webhooks and prints p50/p99 from each delivery to the next batch's
// workload write, then pushes reverts and prints the same from each push
// delivery to the abort's write and to every pod on stable, and the GitHub
// requests spent per rollout and per idle hour.
//
// --scenario=approval releases to --rollouts Rollouts whose step 1 waits
// for an approval, approves them all at once (half through a status patch,
// half through sluice.dev/approve) and prints p50/p99 from each approval to
// the next batch's workload write. --scenario=idle watches Healthy
// Rollouts for --idle and counts what the manager does.
//
// --trace adds what each Rollout reported over time; --log-requests logs
// every API request of the manager with its body, for finding where
// requests go. It exits non-zero only when the scenario cannot be run, and
// stops everything it started on every way out, Ctrl-C included.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
)

// sampleInterval is how often memory is sampled in the window.
const sampleInterval = 100 * time.Millisecond

// options are the command-line flags.
type options struct {
	rollouts, replicas  int
	json, trace         bool
	verbose, managerLog bool
	logRequests         bool
	timeout, settle     time.Duration
	scenario            string
	prs                 int
	cpuProfile          string
	memProfile          string
	row                 bool
	idle                time.Duration
	// managerProcess runs the manager in a process of its own, so that the
	// memory and CPU reported are the manager's alone.
	managerProcess bool
	// serveManager and kubeconfig make this process that manager's process
	// (set by the benchmark itself, never by hand).
	serveManager, kubeconfig string
}

func main() {
	var o options
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	fs.IntVar(&o.rollouts, "rollouts", 10, "number of Deployments, each with its own Rollout")
	fs.IntVar(&o.replicas, "replicas", 10, "replicas of each Deployment")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON")
	fs.BoolVar(&o.trace, "trace", false, "also print what each Rollout reported over time")
	fs.BoolVar(&o.verbose, "v", false, "print the control plane's progress to stderr")
	fs.BoolVar(&o.managerLog, "manager-log", false, "print the sluice manager's logs to stderr")
	fs.BoolVar(&o.logRequests, "log-requests", false, "print every API request of the manager to stderr (skews the memory numbers)")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long the releases may take")
	fs.DurationVar(&o.settle, "settle", 2*time.Second, "how long to keep counting writes after the last release completed")
	fs.StringVar(&o.scenario, "scenario", "release", "release (many Rollouts released at once), approval (Rollouts paused at step 1 approved at once), idle, or gitops (Rollouts bound to one GitGate, approved by webhooks)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the process (manager included) over the measured phases to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "release and idle: write a heap profile of the process at the end of the measured phase to this file")
	fs.BoolVar(&o.row, "row", false, "release: print only one line of docs/performance.md's table (--row-header prints its header)")
	if len(os.Args) == 2 && os.Args[1] == "--row-header" {
		fmt.Println(rowHeader)
		return
	}
	fs.DurationVar(&o.idle, "idle", 10*time.Minute, "idle: how long to watch the Healthy Rollouts")
	fs.IntVar(&o.prs, "prs", 10, "gitops: how many pull requests carry the commits of the Rollouts")
	fs.BoolVar(&o.managerProcess, "manager-process", false, "release, approval and idle: run the manager in a process of its own, so that memory and CPU are the manager's alone (no --cpuprofile or --memprofile then)")
	fs.StringVar(&o.serveManager, "serve-manager", "", "internal: be the manager's process of --manager-process, answering the benchmark on this address")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "internal: the control plane of --serve-manager")
	_ = fs.Parse(os.Args[1:])
	if o.serveManager != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := serveManager(ctx, o.serveManager, o.kubeconfig, managerLogger(o, os.Stderr), requestLogOf(o, os.Stderr))
		stop()
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "bench manager:", err)
			os.Exit(1)
		}
		return
	}
	if o.scenario == "gitops" {
		rolloutsSet := false
		fs.Visit(func(f *flag.Flag) { rolloutsSet = rolloutsSet || f.Name == "rollouts" })
		if !rolloutsSet {
			o.rollouts = 100
		}
	}
	if o.scenario != "release" && o.scenario != "gitops" && o.scenario != "idle" && o.scenario != "approval" {
		fmt.Fprintln(os.Stderr, "bench: --scenario must be release, approval, idle or gitops")
		os.Exit(2)
	}
	if o.managerProcess && (o.scenario == "gitops" || o.cpuProfile != "" || o.memProfile != "") {
		fmt.Fprintln(os.Stderr, "bench: --manager-process measures the release, approval and idle scenarios, without profiles (they are of the benchmark's own process)")
		os.Exit(2)
	}
	if o.rollouts < 1 || o.replicas < 1 || o.replicas > 1000 {
		fmt.Fprintln(os.Stderr, "bench: --rollouts must be at least 1 and --replicas between 1 and 1000")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o, os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	stop()
	if interrupted {
		fmt.Fprintf(os.Stderr, "bench: interrupted (%v); everything it started is stopped\n", err)
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run starts the control plane and the manager, runs the scenario, prints
// the results and stops everything it started, on every way out.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	began := time.Now()
	res := &result{Rollouts: o.rollouts, Replicas: int32(o.replicas), //nolint:gosec // bounded by the flag check
		Env: environment{GoVersion: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH,
			GOMAXPROCS: runtime.GOMAXPROCS(0), CPUs: runtime.NumCPU()}}
	var clusterLog io.Writer
	if o.verbose {
		clusterLog = stderr
	}
	_, _ = fmt.Fprintln(stderr, "bench: starting the control plane")
	cl, err := cluster.Start(ctx, cluster.Options{Log: clusterLog, Nodes: nodesFor(o.rollouts * o.replicas)})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cl.Stop()) }()
	res.Setup.Cluster = time.Since(began).Seconds()

	cfg := cl.RESTConfig()
	if err := env.InstallCRDs(ctx, cfg); err != nil {
		return err
	}
	logger := managerLogger(o, stderr)
	if o.scenario == "gitops" {
		return runGitOpsBench(ctx, cfg, o, logger, stdout, stderr)
	}
	side, stopManager, err := startManager(ctx, o, cfg, cl.KubeconfigPath(), stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopManager()) }()
	res.Setup.Manager = time.Since(began).Seconds() - res.Setup.Cluster

	scheme, err := app.Scheme()
	if err != nil {
		return err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	s := &scenario{c: c, runID: rand.String(5), n: o.rollouts, replicas: res.Replicas, progress: stderr, approval: o.scenario == "approval"}
	s.logf("creating %d deployments of %d replicas", s.n, s.replicas)
	if err := s.setup(ctx); err != nil {
		return err
	}
	res.Setup.Total = time.Since(began).Seconds()
	res.Setup.Workloads = res.Setup.Total - res.Setup.Cluster - res.Setup.Manager

	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	if o.scenario == "idle" {
		s.logf("ready after %.1fs; watching %d healthy rollouts for %s", res.Setup.Total, s.n, o.idle)
		r, err := measureIdle(ctx, side, s.n, o.idle)
		return report(o, stdout, r, errors.Join(err, stopProfile()), func() { printIdle(stdout, r) })
	}
	if o.scenario == "approval" {
		s.logf("ready after %.1fs; changing %d images", res.Setup.Total, s.n)
		// The approvals go out at once: a client-side rate limit would
		// delay the last of 1,000 by seconds inside the measured time.
		free := rest.CopyConfig(cfg)
		free.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
		approver, err := client.New(free, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		r, err := measureApproval(ctx, s, approver, side, o.timeout)
		return report(o, stdout, r, errors.Join(err, stopProfile()), func() { printApproval(stdout, r) })
	}
	s.logf("ready after %.1fs; changing %d images", res.Setup.Total, s.n)
	w, err := measure(ctx, s, side, o)
	if err := errors.Join(err, stopProfile(), writeHeapProfile(o.memProfile)); err != nil {
		return err
	}
	w.fill(res, s.namespaces(), o.settle)
	if o.row {
		printRow(stdout, res)
		return nil
	}
	if o.json {
		return printJSON(stdout, res)
	}
	printText(stdout, res)
	if o.trace {
		_, _ = fmt.Fprintln(stdout, "\ntimelines, seconds from each image change (as delivered by a watch):")
		printTimelines(stdout, s.namespaces(), w.changedAt, w.timelines)
	}
	return nil
}

// managerLogger is where the manager's logs go: stderr with --manager-log,
// nowhere without.
func managerLogger(o options, stderr io.Writer) logr.Logger {
	if !o.managerLog {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { _, _ = fmt.Fprintln(stderr, prefix, args) }, funcr.Options{})
}

// requestLogOf is where every API request of the manager is logged:
// stderr with --log-requests, nowhere without.
func requestLogOf(o options, stderr io.Writer) io.Writer {
	if !o.logRequests {
		return nil
	}
	return stderr
}

// startManager starts the sluice manager in this process, or with
// --manager-process in one of its own, and returns how to measure it and
// how to stop it.
func startManager(ctx context.Context, o options, cfg *rest.Config, kubeconfig string, stderr io.Writer) (managerSide, func() error, error) {
	if o.managerProcess {
		a, err := startApart(ctx, kubeconfig, o.managerLog, o.logRequests, stderr)
		if err != nil {
			return nil, nil, err
		}
		return a, func() error { a.stop(); return nil }, nil
	}
	counter := newRequestCounter(requestLogOf(o, stderr))
	m, err := env.StartManager(ctx, cfg, env.ManagerOptions{Name: "sluice-bench", Logger: managerLogger(o, stderr), WrapTransport: counter.wrap})
	if err != nil {
		return nil, nil, err
	}
	return inProcess{counter: counter}, m.Stop, nil
}

// measure changes every image, waits until every release completed, and
// returns what the window between the first change and the last completion
// recorded.
func measure(ctx context.Context, s *scenario, side managerSide, o options) (*window, error) {
	tr := newTracker()
	watchCtx, stopWatch := context.WithCancel(ctx)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		tr.run(watchCtx, s.c, s.runID)
	}()
	defer func() {
		stopWatch()
		<-watching
	}()

	w := &window{changedAt: map[string]time.Time{}, process: side.process()}
	var err error
	if w.metricsBefore, err = side.controllerMetrics(); err != nil {
		return nil, err
	}
	sampler := startSampling(side, sampleInterval)
	cpuBefore := side.cpuSeconds()
	side.openWindow()
	at, revisions, err := s.changeImages(ctx)
	if err != nil {
		_, _, _ = sampler.stop()
		return nil, err
	}
	want := map[string]string{}
	w.first = at[0]
	for i, ns := range s.namespaces() {
		w.changedAt[ns], want[ns] = at[i], revisions[i]
		side.mark(at[i], "image changed in "+ns)
		if at[i].Before(w.first) {
			w.first = at[i]
		}
	}
	tr.expect(want)
	w.done, err = tr.wait(ctx, o.timeout)
	w.end = time.Now()
	w.baseline, w.peak, w.samples = sampler.stop()
	w.depths, w.cpu, w.peakRSS = sampler.depths(), side.cpuSeconds()-cpuBefore, side.peakRSS()
	if err != nil {
		return nil, err
	}
	w.inWindow = side.snapshot()
	if w.metricsAfter, err = side.controllerMetrics(); err != nil {
		return nil, err
	}
	s.logf("all releases completed %.1fs after the first change", w.end.Sub(w.first).Seconds())

	if err := s.waitDeployments(ctx, imageNew); err != nil {
		return nil, err
	}
	w.deploymentsAvailable = time.Now()
	sleep(ctx, time.Until(w.end.Add(o.settle)))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	w.after = map[requestKey]requestStat{}
	for k, st := range side.snapshot() {
		if d := st.N - w.inWindow[k].N; d > 0 {
			w.after[k] = requestStat{N: d, Time: st.Time - w.inWindow[k].Time}
		}
	}
	w.timelines = tr.timelines()
	return w, nil
}

// nodesFor is how many fake nodes hold pods pods with room for the surge
// of a release (kwok nodes take 110 pods each; 3 at least, 250 at most).
func nodesFor(pods int) int {
	return min(max(3, pods*3/2/100+1), 250)
}

// report ends a scenario that measured r: unless err, it writes the heap
// profile and prints r as JSON (--json) or with printText.
func report(o options, stdout io.Writer, r any, err error, printText func()) error {
	if err := errors.Join(err, writeHeapProfile(o.memProfile)); err != nil {
		return err
	}
	if o.json {
		return json.NewEncoder(stdout).Encode(r)
	}
	printText()
	return nil
}
