package main

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/examples"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// The repository the story commits decodes strictly, and the release
// changes exactly the image tag.
func TestShopRepository_decodesAndTheReleaseChangesOnlyTheImage(t *testing.T) {
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	files, err := firstCommit()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"apps/deployment.yaml", "apps/service.yaml", "apps/ingress.yaml", "apps/rollout.yaml", "README.md"} {
		if _, ok := files[name]; !ok {
			t.Errorf("the first commit lacks %s: %v", name, files)
		}
	}
	for name, content := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		if objs, err := examples.Decode([]byte(content), scheme); err != nil || len(objs) != 1 {
			t.Errorf("%s: %d objects, %v", name, len(objs), err)
		}
	}
	old := files[deploymentFile]
	bumped := withImageTag(old, stableTag, newTag)
	if bumped == old || strings.Replace(old, ":v1\n", ":v2\n", 1) != bumped || !strings.Contains(bumped, "registry.example/shop/checkout:v2\n") {
		t.Errorf("the release changes the manifest to:\n%s", bumped)
	}
	objs, err := examples.Decode([]byte(platformYAML("http://127.0.0.1:1/shop.git", "http://127.0.0.1:2/")), scheme)
	if err != nil || len(objs) != 3 {
		t.Fatalf("the platform's objects: %d, %v", len(objs), err)
	}
}

func TestCheckLine_showsStatusesAsGitHubDoes(t *testing.T) {
	tests := []struct {
		state, want string
	}{
		{"success", "✓ success sluice/demo/checkout — released: 3/3 steps done"},
		{"pending", "● pending sluice/demo/checkout — released: 3/3 steps done"},
		{"failure", "✗ failure sluice/demo/checkout — released: 3/3 steps done"},
		{"error", "✗ error   sluice/demo/checkout — released: 3/3 steps done"},
	}
	for _, tt := range tests {
		got := checkLine(githubfake.Status{State: tt.state, Context: "sluice/demo/checkout", Description: "released: 3/3 steps done"})
		if got != tt.want {
			t.Errorf("checkLine(%s) = %q, want %q", tt.state, got, tt.want)
		}
	}
	if got := (trackedCommit{sha: "1a2b3c4d5e6f", name: "PR #1"}).describe(); got != "1a2b3c4 (PR #1)" {
		t.Errorf("describe() = %q", got)
	}
}

func TestParseOptions(t *testing.T) {
	var sink strings.Builder
	o, err := parseOptions([]string{"--basic", "--pace=0", "--plain", "--keep", "--dir=/tmp/x"}, &sink)
	if err != nil || !o.basic || o.pace != 0 || !o.plain || !o.keep || o.dir != "/tmp/x" {
		t.Fatalf("options %+v, %v", o, err)
	}
	if _, err := parseOptions([]string{"extra"}, &sink); err == nil {
		t.Error("an argument was accepted")
	}
}
