package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// indexData is what the index page draws.
type indexData struct {
	Title    string
	Rollouts []Summary
}

// pageData is what the page of one Rollout draws.
type pageData struct {
	Title  string
	View   View
	Stream string
	JSON   string
}

func (s *Server) summaries(r *http.Request) ([]Summary, error) {
	list := &rolloutsv1beta1.RolloutList{}
	if err := s.Client.List(r.Context(), list); err != nil {
		return nil, fmt.Errorf("listing rollouts: %w", err)
	}
	return Summaries(list.Items), nil
}

func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request, p *pages) {
	rows, err := s.summaries(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, p.index, "index.html", indexData{Title: "Rollouts", Rollouts: rows})
}

func (s *Server) serveIndexJSON(w http.ResponseWriter, r *http.Request) {
	rows, err := s.summaries(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, rows)
}

// key reads the Rollout named by the path.
func key(r *http.Request) types.NamespacedName {
	return types.NamespacedName{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
}

func (s *Server) view(r *http.Request) (View, bool, error) {
	in, err := s.read(r.Context(), key(r), nil)
	if errors.Is(err, errNoRollout) {
		return View{}, false, nil
	}
	if err != nil {
		return View{}, false, err
	}
	return Build(in), true, nil
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request, p *pages) {
	v, ok, err := s.view(r)
	switch {
	case err != nil:
		s.fail(w, err)
		return
	case !ok:
		http.NotFound(w, r)
		return
	}
	k := key(r)
	s.render(w, p.rollout, "rollout.html", pageData{Title: k.String(), View: v,
		Stream: "/events" + PagePath(k.Namespace, k.Name), JSON: "/api" + PagePath(k.Namespace, k.Name)})
}

func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request) {
	v, ok, err := s.view(r)
	switch {
	case err != nil:
		s.fail(w, err)
	case !ok:
		http.NotFound(w, r)
	default:
		writeJSON(w, v)
	}
}

// serveStream sends the drawn view of the Rollout as a "view" event
// whenever it changes, until the client goes away; a "gone" event when the
// Rollout is deleted.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, p *pages) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ctx := r.Context()
	ec := &eventCache{}
	ticker := time.NewTicker(s.interval())
	defer ticker.Stop()
	var last string
	lastSent := time.Now()
	for {
		in, err := s.read(ctx, key(r), ec)
		switch {
		case errors.Is(err, errNoRollout):
			writeEvent(w, "gone", "the rollout was deleted")
			flusher.Flush()
			return
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			s.Logger.Error(err, "Reading the rollout for the web view")
		default:
			// Ages change every second; they alone are redrawn every
			// ageRefresh, anything else as soon as it changes.
			v := Build(in)
			if fp := fingerprint(v); fp != last || time.Since(lastSent) > ageRefresh {
				var b bytes.Buffer
				if err := p.view.ExecuteTemplate(&b, "view", v); err != nil {
					s.Logger.Error(err, "Rendering the web view")
					return
				}
				writeEvent(w, "view", b.String())
				last, lastSent = fp, time.Now()
				flusher.Flush()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// ageRefresh is how often a live page is redrawn when only ages changed.
const ageRefresh = 30 * time.Second

// fingerprint identifies what v draws, ages left out.
func fingerprint(v View) string {
	v.Approvals = append([]Approval(nil), v.Approvals...)
	for i := range v.Approvals {
		v.Approvals[i].Age = ""
	}
	v.Events = append([]Event(nil), v.Events...)
	for i := range v.Events {
		v.Events[i].Age = ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// writeEvent writes one Server-Sent Event; each line of data becomes a
// data: line, which the browser joins again with newlines.
func writeEvent(w http.ResponseWriter, name, data string) {
	var b strings.Builder
	b.WriteString("event: " + name + "\n")
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, _ = fmt.Fprint(w, b.String())
}

func (s *Server) render(w http.ResponseWriter, t *template.Template, name string, data any) {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		s.fail(w, fmt.Errorf("rendering %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// fail logs err and answers 500 without its details, which may name
// cluster internals.
func (s *Server) fail(w http.ResponseWriter, err error) {
	s.Logger.Error(err, "Serving the web view")
	http.Error(w, "the web view could not read the cluster; see the manager's log", http.StatusInternalServerError)
}
