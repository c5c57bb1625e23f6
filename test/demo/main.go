// Command demo runs a real multi-batch release on a local control plane and
// shows it as it happens. It starts the control plane of package
// test/cluster (building it on first use), runs the sluice manager
// in-process, applies examples/multi-batch-deployment, changes the image
// from v1 to v2 and approves each paused step, alternating the two ways a
// user approves. Then it stops everything it started. `make demo` runs it.
//
// Usage:
//
//	go run ./test/demo [--pace 3s] [--keep]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/examples"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
)

// Widths of the live panel, in columns.
const (
	defaultWidth = 80
	maxWidth     = 100
)

// options are the demo's flags.
type options struct {
	// keep leaves the cluster and sluice running after the release until
	// the demo is interrupted.
	keep bool
	// pace is how long each paused step stays on screen before the demo
	// approves it.
	pace time.Duration
}

func main() {
	var o options
	flag.BoolVar(&o.keep, "keep", false, "after the release, keep the control plane and sluice running until interrupted (Ctrl-C)")
	flag.DurationVar(&o.pace, "pace", 3*time.Second, "how long each paused step stays on screen before the demo approves it")
	flag.Parse()
	os.Exit(exitCode(o))
}

// exitCode runs the demo until it ends or is interrupted and returns the
// process exit status.
func exitCode(o options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, o, os.Stdout)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "demo: interrupted; everything it started is stopped")
		return 130
	case err != nil:
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		return 1
	}
	return 0
}

// run runs the demo, writing to out, and stops what it started before it
// returns, also when ctx ends.
func run(ctx context.Context, o options, out io.Writer) (err error) {
	begin := time.Now()
	fmt.Fprintln(out, "sluice demo: a multi-batch release of a 10-pod Deployment on a local control plane")
	fmt.Fprintln(out, "Finding the control-plane binaries; the first run builds Kubernetes from source (about 7-10 minutes on 2 cores)")
	bin, err := cluster.Binaries(ctx, &linePrefixer{w: out, prefix: "  build: "})
	if err != nil {
		return err
	}
	dir, err := stateDir()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok in %s\n", dir)
	c, err := cluster.Start(ctx, cluster.Options{Dir: dir, BinDir: bin, Log: &linePrefixer{w: out, prefix: "  "}})
	if err != nil {
		return fmt.Errorf("starting the local control plane: %w", err)
	}
	defer func() {
		fmt.Fprintln(out, "Stopping the local control plane")
		err = errors.Join(err, c.Stop())
	}()

	cfg := c.RESTConfig()
	if err := env.InstallCRDs(ctx, cfg); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	logPath := filepath.Join(dir, "logs", "sluice.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, logFile.Close()) }()
	logger := zap.New(zap.WriteTo(logFile), zap.ConsoleEncoder())
	klog.SetLogger(logger) // client-go's own messages go to the file too, not over the panel
	fmt.Fprintf(out, "Starting sluice in-process (its log: %s)\n", logPath)
	m, err := env.StartManager(ctx, cfg, env.ManagerOptions{Name: "sluice-demo", Logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(out, "Stopping sluice")
		err = errors.Join(err, m.Stop())
	}()
	fmt.Fprintf(out, "Ready in %s\n\n", time.Since(begin).Round(100*time.Millisecond))

	d, objs, err := newDemo(c, o, out)
	if err != nil {
		return err
	}
	if err := d.apply(ctx, objs); err != nil {
		return err
	}
	d.note("Applied examples/%s: Namespace %s, Deployment %s (%s), Rollout %s", examples.MultiBatchDeploymentDir,
		d.key.Namespace, d.key.Name, d.oldImage, d.key.Name)
	final, err := d.run(ctx)
	d.screen.close()
	if err != nil {
		return err
	}
	summarize(out, final, time.Since(d.start))
	if o.keep {
		return keep(ctx, out, c, d)
	}
	return nil
}

// newDemo decodes the example and prepares the demo of its release, from
// its image to the same image tagged v2.
func newDemo(c *cluster.Cluster, o options, out io.Writer) (*demo, []client.Object, error) {
	scheme, err := app.Scheme()
	if err != nil {
		return nil, nil, err
	}
	objs, err := examples.MultiBatchDeployment(scheme)
	if err != nil {
		return nil, nil, err
	}
	var dep *appsv1.Deployment
	for _, obj := range objs {
		if x, ok := obj.(*appsv1.Deployment); ok {
			dep = x
		}
	}
	if dep == nil || len(dep.Spec.Template.Spec.Containers) == 0 {
		return nil, nil, errors.New("the example has no Deployment with a container")
	}
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, err
	}
	ct := dep.Spec.Template.Spec.Containers[0]
	d := &demo{
		c: cl, screen: newScreen(out), pace: o.pace, failed: c.Failed(), start: time.Now(),
		key:       types.NamespacedName{Namespace: dep.Namespace, Name: dep.Name},
		container: ct.Name, oldImage: ct.Image, newImage: withTag(ct.Image, "v2"),
	}
	d.title = fmt.Sprintf("Rollout %s/%s: releasing %s", dep.Namespace, dep.Name, d.newImage)
	return d, objs, nil
}

// summarize prints the end state of a completed release and the approvals
// sluice recorded.
func summarize(out io.Writer, s *snapshot, took time.Duration) {
	ro, d := s.rollout, s.deployment
	fmt.Fprintf(out, "\nRelease complete after %s: %s\n", took.Round(100*time.Millisecond), ro.Status.Message)
	_, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	fmt.Fprintf(out, "Deployment %s handed back: paused=%v, %s, %s, minReadySeconds %d, %s annotation present=%v\n",
		d.Name, d.Spec.Paused, d.Spec.Strategy.Type, rollingBounds(d), d.Spec.MinReadySeconds, rolloutsv1beta1.DeploymentOriginalAnnotation, held)
	records, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		fmt.Fprintf(out, "The approvals record is unreadable: %v\n", err)
		return
	}
	fmt.Fprintf(out, "Approvals recorded on Rollout %s (annotation %s):\n", ro.Name, rolloutsv1beta1.ApprovalsAnnotation)
	for _, r := range records {
		at := "-"
		if r.At != nil {
			at = r.At.Local().Format("15:04:05")
		}
		fmt.Fprintf(out, "  step %d  revision %s  by %-14s via %-10s at %s\n", r.Step, r.Revision, r.By, r.Via, at)
	}
	fmt.Fprintln(out)
}

// keep leaves the cluster and sluice running until ctx ends or the
// cluster fails, and says how to use them meanwhile.
func keep(ctx context.Context, out io.Writer, c *cluster.Cluster, d *demo) error {
	ns, name := d.key.Namespace, d.key.Name
	fmt.Fprintf(out, `The control plane and sluice keep running. In another terminal:

  export KUBECONFIG=%s
  kubectl -n %s get rollout,deployment,pods
  kubectl -n %s set image deployment/%s %s=%s
  kubectl -n %s get rollout %s -w

Approve paused steps as examples/%s/README.md shows.
Press Ctrl-C here to stop sluice and the control plane.
`, c.KubeconfigPath(), ns, ns, name, d.container, withTag(d.newImage, "v3"), ns, name, examples.MultiBatchDeploymentDir)
	select {
	case <-ctx.Done():
		return nil
	case err := <-c.Failed():
		return fmt.Errorf("the local control plane failed: %w", err)
	}
}

// stateDir is where the demo's control plane keeps its state and logs:
// $SLUICE_CACHE/demo, SLUICE_CACHE defaulting to the user cache directory's
// sluice folder. A new run starts afresh there.
func stateDir() (string, error) {
	if cache := os.Getenv("SLUICE_CACHE"); cache != "" {
		return filepath.Join(cache, "demo"), nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a state directory (or set SLUICE_CACHE): %w", err)
	}
	return filepath.Join(cache, "sluice", "demo"), nil
}

// withTag returns image with its tag replaced by tag.
func withTag(image, tag string) string {
	if t := imageTag(image); t != image {
		return image[:len(image)-len(t)] + tag
	}
	return image + ":" + tag
}

// linePrefixer writes every complete line it receives to w after prefix.
type linePrefixer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

// Write implements io.Writer.
func (p *linePrefixer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i]); err != nil {
			return 0, err
		}
		p.buf = p.buf[i+1:]
	}
}
