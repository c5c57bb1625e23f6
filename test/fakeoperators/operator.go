// Package fakeoperators holds TEST DOUBLES for the controllers of workload
// kinds whose real controllers cannot run in sluice's tests: OpenKruise's
// CloneSet, Advanced StatefulSet and Advanced DaemonSet (kruise-manager is
// not available here) and the operator of a StatefulSet-like custom kind.
//
// Each double does what sluice relies on, the way the real controller
// documents it: it creates pods from spec.template, labels them with their
// revision, honours the update partition (and paused), and reports the
// status fields the real controller reports. The CloneSet double also
// honours maxSurge, maxUnavailable and minReadySeconds as OpenKruise
// documents them (planCloneSet), which a blue-green release relies on. The
// doubles do nothing else: no volumes, no in-place updates, no revision
// history objects (revisions are remembered in memory), and the other
// kinds have no surge and no unavailability budget. They are not reference
// implementations of those kinds and are not used by sluice.
package fakeoperators

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// FieldManager is the field manager of every write of the doubles.
const FieldManager = "fake-operator"

// Controller is one test double, for one kind.
type Controller interface {
	setup(mgr ctrl.Manager) error
}

// Operator runs test doubles in the test process.
type Operator struct {
	cancel context.CancelFunc
	done   chan error
}

// Start runs the controllers for the workloads of namespace until Stop.
func Start(ctx context.Context, cfg *rest.Config, namespace string, controllers ...Controller) (*Operator, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	skip := true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 ctrl.LoggerFrom(ctx).WithName("fake-operator"),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the fake operator: %w", err)
	}
	for _, c := range controllers {
		if err := c.setup(mgr); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o := &Operator{cancel: cancel, done: make(chan error, 1)}
	go func() { o.done <- mgr.Start(runCtx) }()
	return o, nil
}

// Stop stops the controllers and waits for them to end.
func (o *Operator) Stop() error {
	o.cancel()
	select {
	case err := <-o.done:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("fake operator did not stop within 30s")
	}
}
