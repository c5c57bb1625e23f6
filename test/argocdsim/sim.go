package argocdsim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/gitops/appliedcommit"
)

// DefaultInterval is the refresh period when Options.Interval is zero:
// short, so that a test sees a push applied and drift healed within seconds
// (Argo CD refreshes every three minutes and heals within seconds of a
// change it watches).
const DefaultInterval = 2 * time.Second

// Options configure a Sim.
type Options struct {
	// Client reads and writes the control plane; its scheme needs only the
	// built-in kinds (everything else is read as unstructured objects).
	Client client.Client
	// Name is the Application's name.
	Name string
	// Namespace is the Application's namespace; empty means Argo CD's own
	// (argocd).
	Namespace string
	// RepoURL is the repository to read (a test/gitserver Repo's URL).
	RepoURL string
	// Branch is the branch followed (the Application's targetRevision);
	// empty means main.
	Branch string
	// Path is the folder of manifests in the repository.
	Path string
	// Destination is the namespace of namespaced objects that name none.
	Destination string
	// Interval is how often the branch is read and applied; zero means
	// DefaultInterval.
	Interval time.Duration
	// ServerSideApply applies with server-side apply (Argo CD's
	// ServerSideApply=true sync option) instead of the default client-side
	// apply.
	ServerSideApply bool
}

// Sim is a running simulated Argo CD Application.
type Sim struct {
	c    client.Client
	o    Options
	app  string // the application's name in tracking ids
	stop context.CancelFunc
	done chan struct{}

	passMu sync.Mutex // one pass at a time

	mu        sync.Mutex
	automated bool
	passes    int
	heals     int
	revision  string
	lastErr   error
}

// Start creates the Application (when missing) and starts refreshing and
// syncing it every Interval until Stop. Its first pass runs before it
// returns: an error there is returned, and later ones are kept in Err.
func Start(ctx context.Context, o Options) (*Sim, error) {
	if o.Client == nil || o.Name == "" || o.RepoURL == "" || o.Destination == "" {
		return nil, errors.New("options: Client, Name, RepoURL and Destination are required")
	}
	if o.Namespace == "" {
		o.Namespace = appliedcommit.DefaultArgoCDNamespace
	}
	if o.Branch == "" {
		o.Branch = "main"
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	s := &Sim{c: o.Client, o: o, app: o.Name, automated: true, done: make(chan struct{})}
	if o.Namespace != appliedcommit.DefaultArgoCDNamespace {
		s.app = o.Namespace + "_" + o.Name
	}
	if err := s.ensureApplication(ctx); err != nil {
		return nil, err
	}
	if err := s.SyncNow(ctx); err != nil {
		return nil, err
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = cancel
	go s.loop(loopCtx)
	return s, nil
}

// loop refreshes every Interval until its context ends.
func (s *Sim) loop(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !s.Automated() {
			continue
		}
		_ = s.SyncNow(ctx) // kept in Err
	}
}

// Stop ends the refresh loop and waits for a pass under way.
func (s *Sim) Stop() {
	s.stop()
	<-s.done
}

// SetAutomated switches automated sync (and so self-heal) on or off, as
// editing the Application's syncPolicy.automated would; SyncNow still
// syncs, as a manual sync does. It waits for a pass under way, so that
// none runs after it returns while automated sync is off.
func (s *Sim) SetAutomated(on bool) {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.automated = on
}

// Automated reports whether automated sync is on.
func (s *Sim) Automated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.automated
}

// Passes returns how many refreshes have completed without error.
func (s *Sim) Passes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.passes
}

// Heals returns how many completed passes wrote something to the cluster
// (the first sync of a commit or a drift put back).
func (s *Sim) Heals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heals
}

// Revision returns the commit the last completed pass synced.
func (s *Sim) Revision() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revision
}

// Err returns the error of the last pass, nil when it succeeded.
func (s *Sim) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// TrackingID returns the tracking annotation's value for an object.
func (s *Sim) TrackingID(group, kind, namespace, name string) string {
	return fmt.Sprintf("%s:%s/%s:%s/%s", s.app, group, kind, namespace, name)
}

// SyncNow refreshes and syncs once: it reads the branch head, applies every
// manifest that drifted and records the revision in the Application.
func (s *Sim) SyncNow(ctx context.Context) error {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	sha, wrote, err := s.pass(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
	if err != nil {
		return err
	}
	s.passes++
	s.revision = sha
	if wrote {
		s.heals++
	}
	return nil
}

// pass does one refresh and sync.
func (s *Sim) pass(ctx context.Context) (sha string, wrote bool, err error) {
	sha, objs, err := manifests(ctx, s.o.RepoURL, s.o.Branch, s.o.Path)
	if err != nil {
		return "", false, err
	}
	var errs []error
	for _, obj := range objs {
		w, err := s.apply(ctx, obj)
		if err != nil {
			errs = append(errs, err)
		}
		wrote = wrote || w
	}
	syncErr := errors.Join(errs...)
	if err := s.recordSync(ctx, sha, wrote, syncErr); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return "", false, fmt.Errorf("syncing Application %s/%s at %s: %w", s.o.Namespace, s.o.Name, sha, err)
	}
	return sha, wrote, nil
}

// apply completes one manifest (namespace, tracking id) and applies it.
func (s *Sim) apply(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	namespaced, err := s.c.IsObjectNamespaced(obj)
	if err != nil {
		return false, fmt.Errorf("%s: %w", describe(obj), err)
	}
	if namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace(s.o.Destination)
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	gvk := obj.GroupVersionKind()
	ann[appliedcommit.ArgoCDTrackingAnnotation] = s.TrackingID(gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName())
	obj.SetAnnotations(ann)
	if s.o.ServerSideApply {
		return s.applyServerSide(ctx, obj)
	}
	return s.applyClientSide(ctx, obj)
}
