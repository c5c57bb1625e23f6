package main

import (
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Every logger of the process writes to the demo's files once openLogs
// returns: controller-runtime's global logger (unset, it prints a warning
// and a stack trace to stderr when a logger is derived from it after the
// process's first 30 seconds, as client.New does), klog (client-go) and the
// standard library's logger (the Git server's request lines).
func TestOpenLogs_sendsEveryLoggerToFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	l, err := openLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctrl.Log.WithName("client").Info("through controller-runtime's global logger")
	klog.InfoS("through klog")
	log.Print("request: GET /shop.git/info/refs")
	l.reporter.Errorf("githubfake: %s", "a bad request")
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]string{
		"sluice.log":     {"through controller-runtime's global logger", "through klog"},
		"git-server.log": {"request: GET /shop.git/info/refs"},
		"github.log":     {"githubfake: a bad request"},
	} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q:\n%s", file, w, b)
			}
		}
	}
	if l.reporter.count() != 1 {
		t.Errorf("reporter counted %d problems, want 1", l.reporter.count())
	}
}
