package web

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// fakeReleaser reports a fixed workload status.
type fakeReleaser struct{ status workload.Status }

var _ workload.Releaser = (*fakeReleaser)(nil)

func (f *fakeReleaser) Status(context.Context) (*workload.Status, error) {
	s := f.status
	return &s, nil
}
func (f *fakeReleaser) Claim(context.Context, workload.Owner) error { return errors.New("read only") }
func (f *fakeReleaser) UpgradeBatch(context.Context, int32) (bool, error) {
	return false, errors.New("read only")
}
func (f *fakeReleaser) Finalize(context.Context, bool) (bool, error) {
	return false, errors.New("read only")
}
func (f *fakeReleaser) HoldStable(context.Context) (bool, error) {
	return false, errors.New("read only")
}

// testServer serves the web view of objs through a fake client.
func testServer(t *testing.T, auth Auth, objs ...client.Object) *httptest.Server {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := rolloutsv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	ws := workload.Status{Replicas: 4, UpdatedReplicas: 1, UpdatedReadyReplicas: 1, RevisionLabel: "pod-template-hash",
		PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	s := &Server{Client: c, APIReader: c, Auth: auth, Interval: 20 * time.Millisecond,
		Workloads: func(client.Client, client.Reader, workload.Target) (workload.Releaser, error) {
			return &fakeReleaser{status: ws}, nil
		}}
	h, err := s.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url, token string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, http.NoBody)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func hostile() *rolloutsv1beta1.Rollout {
	ro := rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1", "100%")
	ro.Status.Message = `<script>alert("x")</script>`
	ro.Annotations = map[string]string{PullRequestAnnotation: `<img src=x onerror=alert(1)>`, PullRequestURLAnnotation: "javascript:alert(1)"}
	return ro
}

func TestServer_pageEscapesEverythingAndSetsAStrictPolicy(t *testing.T) {
	srv := testServer(t, Auth{}, hostile(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p1",
		Labels: map[string]string{"app": "web", "pod-template-hash": "h2"}}})
	code, body, h := get(t, srv.URL+"/rollouts/shop/web", "")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	for _, bad := range []string{`<script>alert`, `<img src=x`, `javascript:`} {
		if strings.Contains(body, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	for _, want := range []string{`&lt;script&gt;`, `data-step="1" data-state="paused"`, `data-revision="h2" data-role="new" data-pods="1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if code, _, _ := get(t, srv.URL+"/rollouts/shop/nope", ""); code != http.StatusNotFound {
		t.Errorf("missing rollout: status %d, want 404", code)
	}
}

func TestServer_indexAndJSON(t *testing.T) {
	srv := testServer(t, Auth{}, hostile())
	code, body, _ := get(t, srv.URL+"/", "")
	if code != http.StatusOK || !strings.Contains(body, `href="/rollouts/shop/web"`) || !strings.Contains(body, "1/2") {
		t.Fatalf("index %d: %s", code, body)
	}
	code, body, _ = get(t, srv.URL+"/api/rollouts/shop/web", "")
	if code != http.StatusOK || !strings.Contains(body, `"stepIndex": 1`) || !strings.Contains(body, `"state": "paused"`) {
		t.Fatalf("json %d: %s", code, body)
	}
}

func TestServer_authAsksForTheToken(t *testing.T) {
	srv := testServer(t, Auth{Token: "s3cret"}, hostile())
	tests := []struct {
		name  string
		set   func(*http.Request)
		wantS int
	}{
		{name: "none", set: func(*http.Request) {}, wantS: http.StatusUnauthorized},
		{name: "wrong bearer", set: func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, wantS: http.StatusUnauthorized},
		{name: "bearer", set: func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }, wantS: http.StatusOK},
		{name: "basic, any user", set: func(r *http.Request) { r.SetBasicAuth("me", "s3cret") }, wantS: http.StatusOK},
		{name: "basic, wrong password", set: func(r *http.Request) { r.SetBasicAuth("me", "s3cre") }, wantS: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/api/rollouts", http.NoBody)
			tt.set(req)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.wantS {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantS)
			}
			if tt.wantS == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
				t.Fatalf("WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestServer_streamSendsTheView(t *testing.T) {
	srv := testServer(t, Auth{}, hostile())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events/rollouts/shop/web", http.NoBody)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var event string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case line == "" && event != "":
			html := strings.Join(data, "\n")
			if event != "view" || !strings.Contains(html, `data-step="1" data-state="paused"`) || strings.Contains(html, "<script>") {
				t.Fatalf("event %q: %s", event, html)
			}
			return
		}
	}
	t.Fatalf("stream ended without a view: %v", sc.Err())
}

func TestFingerprint_ignoresAgesOnly(t *testing.T) {
	base := View{Name: "web", StepIndex: 1, Approvals: []Approval{{Step: 1, Age: "5s"}}, Events: []Event{{Reason: "StepPaused", Age: "5s"}}}
	tests := []struct {
		name     string
		change   func(*View)
		wantSame bool
	}{
		{name: "ages", change: func(v *View) { v.Approvals[0].Age, v.Events[0].Age = "6s", "6s" }, wantSame: true},
		{name: "step", change: func(v *View) { v.StepIndex = 2 }},
		{name: "new event", change: func(v *View) { v.Events = append(v.Events, Event{Reason: "Approved"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := base
			v.Approvals = append([]Approval(nil), base.Approvals...)
			v.Events = append([]Event(nil), base.Events...)
			tt.change(&v)
			if same := fingerprint(v) == fingerprint(base); same != tt.wantSame {
				t.Fatalf("same fingerprint = %v, want %v", same, tt.wantSame)
			}
			if base.Approvals[0].Age != "5s" {
				t.Fatal("fingerprint changed the view it was given")
			}
		})
	}
}
