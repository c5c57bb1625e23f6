package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/apimachinery/pkg/util/wait"
)

// browser starts headless Chromium for one test and returns its tab. It
// fails, naming `make chromium`, when Chromium is not installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not on PATH: install it with `make chromium` (hack/chromium.sh): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests may run as root, where Chromium's sandbox refuses to start
		chromedp.WindowSize(1280, 1000),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as the
	// context of that action: ctx, not one with a deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// open loads url in the tab.
func open(tab context.Context, t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
}

// pageState is what the rollout page shows, read from its DOM.
type pageState struct {
	Phase     string     `json:"phase"`
	Current   string     `json:"current"`
	Waiting   string     `json:"waiting"`
	Steps     []string   `json:"steps"`
	Pods      []podRow   `json:"pods"`
	Approvals []string   `json:"approvals"`
	Commit    string     `json:"commit"`
	Live      string     `json:"live"`
	Updates   int        `json:"updates"`
	Marker    string     `json:"marker"`
	Events    []string   `json:"events"`
	Traffic   [2]float64 `json:"traffic"`
}

// podRow is one row of the pods-per-revision table.
type podRow struct {
	Role  string `json:"role"`
	Pods  int    `json:"pods"`
	Ready int    `json:"ready"`
}

func (s pageState) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// readPageJS reads a pageState from the DOM of the rollout page.
const readPageJS = `(() => {
  const text = (id) => { const e = document.getElementById(id); return e ? e.textContent.trim() : ""; };
  const all = (sel) => Array.from(document.querySelectorAll(sel));
  const live = document.getElementById("live");
  const meter = document.querySelector("#traffic meter");
  return {
    phase: text("phase"),
    current: text("current-step"),
    waiting: text("waiting"),
    steps: all("#steps [data-step]").map(e => e.dataset.state),
    pods: all("#pods tr[data-revision]").map(e => ({role: e.dataset.role, pods: +e.dataset.pods, ready: +e.dataset.ready})),
    approvals: all("#approvals tr[data-step]").map(e => "step " + e.dataset.step + " by " + e.children[2].textContent + " via " + e.dataset.via),
    commit: text("commit"),
    live: live ? live.dataset.state : "",
    updates: live ? +(live.dataset.updates || 0) : 0,
    marker: window.sluiceTestMarker || "",
    events: all("#events li").map(e => e.dataset.reason),
    traffic: meter ? [+meter.value, +meter.max] : [0, 0],
  };
})()`

// readPage reads what the page in tab shows now.
func readPage(tab context.Context) (pageState, error) {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[pageState](readPageJS))
}

// waitPage polls the page's DOM until cond holds, failing the test after a
// minute with what the page showed last.
func waitPage(tab context.Context, t *testing.T, what string, cond func(pageState) bool) pageState {
	t.Helper()
	var last pageState
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		last, lastErr = readPage(tab)
		return lastErr == nil && cond(last), nil
	})
	if err != nil {
		t.Fatalf("waiting for the page to show %s: %v; last seen: %s (read error: %v)", what, err, last, lastErr)
	}
	return last
}

// markPage sets a marker in the page's window; a reload would clear it.
func markPage(tab context.Context, t *testing.T, marker string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("window.sluiceTestMarker = %q", marker))); err != nil {
		t.Fatalf("marking the page: %v", err)
	}
}

// screenshot saves a full-page PNG of tab as name in the test's artifact
// directory, and in $SLUICE_TEST_ARTIFACTS when set, and logs the paths.
func screenshot(tab context.Context, t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("taking screenshot %s: %v", name, err)
	}
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("SLUICE_TEST_ARTIFACTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("artifact directory: %v", err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, png, 0o600); err != nil {
			t.Fatalf("saving screenshot: %v", err)
		}
		t.Logf("screenshot %s", path)
	}
}

// indexRow is one row of the index page.
type indexRow struct {
	Phase string `json:"phase"`
	Step  string `json:"step"`
	Link  string `json:"link"`
}

// waitIndexRow waits until the index page in tab lists the Rollout
// namespace/name, and returns its row.
func waitIndexRow(tab context.Context, t *testing.T, rollout string) indexRow {
	t.Helper()
	js := fmt.Sprintf(`(() => {
  const tr = Array.from(document.querySelectorAll("#rollouts tr[data-rollout]")).find(e => e.dataset.rollout === %q);
  if (!tr) { return {phase: "", step: "", link: ""}; }
  return {phase: tr.children[2].textContent, step: tr.children[3].textContent, link: tr.querySelector("a").href};
})()`, rollout)
	var row indexRow
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(tab, 10*time.Second)
		defer cancel()
		r, err := chromedp.Run(ctx, chromedp.Evaluate[indexRow](js))
		row = r
		return err == nil && r.Link != "", nil
	})
	if err != nil {
		t.Fatalf("the index does not list %s: %v", rollout, err)
	}
	return row
}
