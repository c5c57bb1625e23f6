// Package web serves the rollout web view: a read-only page per Rollout that
// draws its release (the steps as a progress track, pods per revision, the
// traffic split, approvals, the Git commit and pull request, the events
// timeline) and updates it live with Server-Sent Events, and an index of
// the Rollouts. The manager runs it as a Runnable on its own port; it reads
// through the manager's cache and never writes.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/sluice-dev/sluice/workload"
)

//go:embed assets
var assets embed.FS

// DefaultInterval is how often a live page is redrawn when nothing says
// otherwise.
const DefaultInterval = time.Second

// The web view reads the events of a Rollout for its timeline.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=get;list;watch

// Server serves the web view. Its zero value is not usable: set Addr,
// Client, APIReader and Workloads.
type Server struct {
	// Addr is the address to listen on, e.g. ":8082".
	Addr string
	// Client reads Rollouts, BatchReleases, pods and workloads, usually
	// from the manager's cache.
	Client client.Client
	// APIReader reads events straight from the API server (they are not
	// cached).
	APIReader client.Reader
	// Workloads makes the adapter that reads a Rollout's workload.
	Workloads workload.Factory
	// Auth guards every route; its zero value lets everyone in.
	Auth Auth
	// Interval is how often live pages are redrawn (default
	// DefaultInterval); events are read at most every EventsInterval
	// (default 3s).
	Interval, EventsInterval time.Duration
	// Logger logs requests that fail.
	Logger logr.Logger
}

var _ manager.Runnable = (*Server)(nil)
var _ manager.LeaderElectionRunnable = (*Server)(nil)

// NeedLeaderElection reports false: every replica serves the view.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx is done.
func (s *Server) Start(ctx context.Context) error {
	h, err := s.Handler()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("web view: listening on %s: %w", s.Addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx }, // ends the live streams on stop
	}
	s.Logger.Info("Serving the web view", "address", l.Addr().String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("web view: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("web view: stopping: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web view: %w", err)
	}
	return nil
}

// pages are the parsed templates.
type pages struct {
	index, rollout, view *template.Template
}

func parsePages() (*pages, error) {
	parse := func(files ...string) (*template.Template, error) {
		return template.New(files[0]).ParseFS(assets, prefixed(files)...)
	}
	p := &pages{}
	var err error
	if p.index, err = parse("index.html", "layout.html"); err != nil {
		return nil, fmt.Errorf("web view: index template: %w", err)
	}
	if p.rollout, err = parse("rollout.html", "layout.html", "view.html"); err != nil {
		return nil, fmt.Errorf("web view: rollout template: %w", err)
	}
	if p.view, err = parse("view.html"); err != nil {
		return nil, fmt.Errorf("web view: view template: %w", err)
	}
	return p, nil
}

func prefixed(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = "assets/" + f
	}
	return out
}

// Handler returns the routes of the web view, behind Auth.
func (s *Server) Handler() (http.Handler, error) {
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { s.serveIndex(w, r, p) })
	mux.HandleFunc("GET /api/rollouts", s.serveIndexJSON)
	mux.HandleFunc("GET /rollouts/{namespace}/{name}", func(w http.ResponseWriter, r *http.Request) { s.servePage(w, r, p) })
	mux.HandleFunc("GET /api/rollouts/{namespace}/{name}", s.serveJSON)
	mux.HandleFunc("GET /events/rollouts/{namespace}/{name}", func(w http.ResponseWriter, r *http.Request) { s.serveStream(w, r, p) })
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	return secureHeaders(s.Auth.Wrap(mux)), nil
}

// secureHeaders sets the headers of every response: nothing but the page's
// own files may run or load, and the page may not be framed.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func (s *Server) interval() time.Duration {
	if s.Interval > 0 {
		return s.Interval
	}
	return DefaultInterval
}

func (s *Server) eventsInterval() time.Duration {
	if s.EventsInterval > 0 {
		return s.EventsInterval
	}
	return 3 * time.Second
}
