package rollout

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// servedLaterPoll is how often a servedLater source asks whether its kind
// is served yet.
const servedLaterPoll = 5 * time.Second

var _ source.Source = (*servedLater)(nil)

// servedLater is a source that starts a metadata-only watch of a kind
// whose CRD may be installed after sluice starts (the Gateway API's
// HTTPRoute), once the API server serves it.
type servedLater struct {
	cache   cache.Cache
	mapper  meta.RESTMapper
	gvk     schema.GroupVersionKind
	handler handler.EventHandler
}

// Start implements source.Source: it returns at once and starts the watch
// in the background when the kind is served.
func (s *servedLater) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[ctrl.Request]) error {
	go func() {
		_ = wait.PollUntilContextCancel(ctx, servedLaterPoll, true, func(ctx context.Context) (bool, error) {
			if _, err := s.mapper.RESTMapping(s.gvk.GroupKind(), s.gvk.Version); err != nil {
				return false, nil //nolint:nilerr // not served yet: ask again later
			}
			obj := &metav1.PartialObjectMetadata{}
			obj.SetGroupVersionKind(s.gvk)
			if err := source.Kind(s.cache, client.Object(obj), s.handler).Start(ctx, queue); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Watching a kind served later", "kind", s.gvk.String())
				return false, nil
			}
			ctrl.LoggerFrom(ctx).Info("Watching a kind now served", "kind", s.gvk.String())
			return true, nil
		})
	}()
	return nil
}

// String names the source in logs.
func (s *servedLater) String() string { return "watch of " + s.gvk.String() + " once served" }
