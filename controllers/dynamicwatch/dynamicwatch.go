// Package dynamicwatch watches, at run time, the workload kinds that
// Rollouts name and that the controllers cannot watch from the start:
// OpenKruise kinds (whose CRDs may not be installed) and StatefulSet-like
// custom kinds (unknown until a Rollout names them). A controller adds one
// Workloads source; once a Rollout names such a kind, the source starts a
// metadata-only watch of it and maps its events to requests. The
// Definitions source wakes the Rollouts of a group when one of its CRDs
// changes (a CRD's label decides whether its kind is StatefulSet-like).
package dynamicwatch

import (
	"context"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload/kinds"
)

var _ source.Source = (*Source)(nil)

// Source is a controller-runtime source of requests for events of the
// workloads Rollouts name, for kinds outside the core "apps" group (those
// the controllers watch statically).
type Source struct {
	cache   cache.Cache
	mapFunc func(kind string) handler.MapFunc

	mu      sync.Mutex
	ctx     context.Context //nolint:containedctx // the controller's context, for the watches started later
	queue   workqueue.TypedRateLimitingInterface[ctrl.Request]
	started map[schema.GroupVersionKind]bool
}

// Workloads returns a Source that maps an event of a workload of kind to
// the requests mapFunc(kind) returns.
func Workloads(c cache.Cache, mapFunc func(kind string) handler.MapFunc) *Source {
	return &Source{cache: c, mapFunc: mapFunc, started: map[schema.GroupVersionKind]bool{}}
}

// Start implements source.Source: it follows the Rollouts in the cache and
// starts a watch for each new workload kind they name.
func (s *Source) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[ctrl.Request]) error {
	s.mu.Lock()
	s.ctx, s.queue = ctx, queue
	s.mu.Unlock()
	go func() {
		logger := ctrl.LoggerFrom(ctx).WithName("dynamicwatch")
		var inf cache.Informer
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			inf, err = s.cache.GetInformer(ctx, &rolloutsv1beta1.Rollout{}, cache.BlockUntilSynced(false))
			if err != nil {
				logger.Error(err, "Getting the Rollout informer")
				return false, nil
			}
			return true, nil
		})
		if inf == nil {
			return
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    s.observe,
			UpdateFunc: func(_, obj any) { s.observe(obj) },
		}); err != nil {
			logger.Error(err, "Following Rollouts")
		}
	}()
	return nil
}

// String names the source in logs.
func (s *Source) String() string { return "dynamic workload watches" }

// observe starts a watch for the workload kind a Rollout names, once.
func (s *Source) observe(obj any) {
	ro, ok := obj.(*rolloutsv1beta1.Rollout)
	if !ok {
		return
	}
	gvk := schema.FromAPIVersionAndKind(ro.Spec.WorkloadRef.APIVersion, ro.Spec.WorkloadRef.Kind)
	if !Dynamic(gvk) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started[gvk] {
		return
	}
	s.started[gvk] = true
	watched := &metav1.PartialObjectMetadata{}
	watched.SetGroupVersionKind(gvk)
	src := source.Kind(s.cache, client.Object(watched), handler.EnqueueRequestsFromMapFunc(s.mapFunc(gvk.Kind)))
	if err := src.Start(s.ctx, s.queue); err != nil {
		ctrl.LoggerFrom(s.ctx).Error(err, "Watching workloads", "kind", gvk.String())
		s.started[gvk] = false
		return
	}
	ctrl.LoggerFrom(s.ctx).Info("Watching workloads of a kind named by a Rollout", "kind", gvk.String())
}

// Dynamic reports whether workloads of kind gvk are watched by a Source:
// any kind with a group and a version that the controllers do not watch
// from their start (kinds.Watched).
func Dynamic(gvk schema.GroupVersionKind) bool {
	return gvk.Group != "" && gvk.Kind != "" && gvk.Version != "" && !kinds.WatchedFromStart(gvk.GroupKind())
}

// Definitions returns a source that maps a change of a
// CustomResourceDefinition (its labels decide whether a custom kind is
// StatefulSet-like) to requests for the Rollouts naming a kind of its
// group, read from reader.
func Definitions(c cache.Cache, reader client.Reader) source.Source {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	return source.Kind(c, client.Object(crd), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
		_, group, ok := strings.Cut(o.GetName(), ".")
		if !ok {
			return nil
		}
		list := &rolloutsv1beta1.RolloutList{}
		if err := reader.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing Rollouts for a CustomResourceDefinition event")
			return nil
		}
		var reqs []ctrl.Request
		for i := range list.Items {
			ro := &list.Items[i]
			if schema.FromAPIVersionAndKind(ro.Spec.WorkloadRef.APIVersion, ro.Spec.WorkloadRef.Kind).Group == group {
				reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ro)})
			}
		}
		return reqs
	}))
}
