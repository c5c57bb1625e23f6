package health

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// fixtures is a health_test.yaml in Argo CD's layout.
type fixtures struct {
	Tests []struct {
		HealthStatus status `json:"healthStatus"`
		InputPath    string `json:"inputPath"`
	} `json:"tests"`
}

// scriptDirs lists the <group>/<Kind> directories holding a health.lua.
func scriptDirs(t *testing.T) []string {
	t.Helper()
	scripts, err := filepath.Glob(filepath.Join("*", "*", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 2 {
		t.Fatalf("found health scripts %v, want the Rollout's and the GitGate's", scripts)
	}
	dirs := make([]string, 0, len(scripts))
	for _, s := range scripts {
		dirs = append(dirs, filepath.Dir(s))
	}
	sort.Strings(dirs)
	return dirs
}

func readObject(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

func TestHealthScripts_fixtures(t *testing.T) {
	for _, dir := range scriptDirs(t) {
		script, err := os.ReadFile(filepath.Join(dir, "health.lua"))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var f fixtures
		if err := yaml.UnmarshalStrict(raw, &f); err != nil {
			t.Fatalf("%s/health_test.yaml: %v", dir, err)
		}
		listed := map[string]bool{}
		seen := map[string]bool{}
		for _, tc := range f.Tests {
			listed[filepath.Clean(tc.InputPath)] = true
			seen[tc.HealthStatus.Status] = true
			t.Run(dir+"/"+tc.InputPath, func(t *testing.T) {
				got, err := runHealth(string(script), readObject(t, filepath.Join(dir, tc.InputPath)))
				if err != nil {
					t.Fatalf("the script failed: %v", err)
				}
				if got != tc.HealthStatus {
					t.Errorf("health = %+v, want %+v", got, tc.HealthStatus)
				}
			})
		}
		inputs, _ := filepath.Glob(filepath.Join(dir, "testdata", "*.yaml"))
		for _, in := range inputs {
			if rel, _ := filepath.Rel(dir, in); !listed[rel] {
				t.Errorf("%s is not listed in %s/health_test.yaml", in, dir)
			}
		}
		for _, s := range []string{"Healthy", "Progressing", "Degraded", "Suspended"} {
			if !seen[s] {
				t.Errorf("%s/health_test.yaml has no %s case", dir, s)
			}
		}
	}
}

func TestHealthScripts_usesNoStandardLibraryBeyondBaseAndTable(t *testing.T) {
	for _, dir := range scriptDirs(t) {
		script, err := os.ReadFile(filepath.Join(dir, "health.lua"))
		if err != nil {
			t.Fatal(err)
		}
		for _, lib := range []string{"string.", "os.", "io.", "math.", "require", ":format", ":find", ":match", ":gsub", ":sub"} {
			if bytes.Contains(script, []byte(lib)) {
				t.Errorf("%s/health.lua uses %q, which argocd-cm scripts do not get", dir, lib)
			}
		}
	}
}

// FuzzHealthScripts runs both scripts on arbitrary objects: a script must never fail (Argo CD
// would show an error instead of a health) and must return a status Argo CD accepts.
func FuzzHealthScripts(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"status":"Healthy"}`,
		`{"metadata":{"generation":"2"},"status":{"observedGeneration":2,"conditions":{"type":"Ready"}}}`,
		`{"spec":{"strategy":{"canary":{"steps":[{"pause":{"duration":"5m"}}]}}},"status":{"phase":"Progressing","canaryStatus":{"currentStepState":"StepPaused","currentStepIndex":7}}}`,
		`{"spec":{"strategy":"canary"},"status":{"phase":"Progressing","canaryStatus":"x","blueGreenStatus":{"currentStepState":"StepPaused","currentStepIndex":1.5}}}`,
		`{"spec":{"strategy":{"blueGreen":{"steps":[null]}}},"status":{"phase":"Progressing","blueGreenStatus":{"currentStepState":"StepPaused","currentStepIndex":1}}}`,
		`{"status":{"phase":7,"message":["a"],"conditions":[1,{"type":"Supported","status":"False","message":{"a":1}}]}}`,
		`{"status":{"conditions":[{"type":"Stalled","status":"True"},{"type":"Ready","status":"True","message":3}]}}`,
		`{"spec":{"suspend":"yes"},"status":{"conditions":[{"type":"Ready","status":"Unknown","message":"m"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	scripts := map[string]string{}
	for _, path := range []string{"rollouts.kruise.io/Rollout/health.lua", "gitops.sluice.dev/GitGate/health.lua"} {
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		scripts[path] = string(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var obj map[string]any
		if json.Unmarshal(raw, &obj) != nil {
			return
		}
		for path, script := range scripts {
			got, err := runHealth(script, obj)
			if err != nil {
				t.Fatalf("%s failed on %s: %v", path, raw, err)
			}
			if got.Status == "Unknown" || !validStatuses[got.Status] {
				t.Fatalf("%s returned %+v on %s", path, got, raw)
			}
		}
	})
}

// configMapSnippet is the argocd-cm data docs/argocd.md shows, built from the scripts.
func configMapSnippet(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\n  labels:\n    app.kubernetes.io/part-of: argocd\ndata:\n")
	for _, dir := range scriptDirs(t) {
		script, err := os.ReadFile(filepath.Join(dir, "health.lua"))
		if err != nil {
			t.Fatal(err)
		}
		group, kind := filepath.Split(dir)
		b.WriteString("  resource.customizations.health." + filepath.Clean(group) + "_" + kind + ": |\n")
		for _, line := range strings.Split(strings.TrimRight(string(script), "\n"), "\n") {
			if line == "" {
				b.WriteString("\n")
				continue
			}
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

// The markers around the generated snippet in docs/argocd.md.
const (
	beginMarker = "<!-- generated from argocd/health by TestDocs_inlineTheScripts: begin -->\n"
	endMarker   = "<!-- generated from argocd/health by TestDocs_inlineTheScripts: end -->\n"
)

func TestDocs_inlineTheScripts(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "argocd.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin, end := strings.Index(doc, beginMarker), strings.Index(doc, endMarker)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the markers of the generated snippet", path)
	}
	want := "```yaml\n" + configMapSnippet(t) + "```\n"
	got := doc[begin+len(beginMarker) : end]
	if got == want {
		return
	}
	if os.Getenv("SLUICE_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(doc[:begin+len(beginMarker)]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s does not inline the current health scripts; run SLUICE_UPDATE_DOCS=1 go test ./argocd/health/ -run TestDocs", path)
}

// TestConfigMapSnippet_isValidYAMLWithTheScripts checks the generated snippet parses back
// into the scripts, byte for byte.
func TestConfigMapSnippet_isValidYAMLWithTheScripts(t *testing.T) {
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(configMapSnippet(t)), &cm); err != nil {
		t.Fatal(err)
	}
	for key, path := range map[string]string{
		"resource.customizations.health.rollouts.kruise.io_Rollout": "rollouts.kruise.io/Rollout/health.lua",
		"resource.customizations.health.gitops.sluice.dev_GitGate":  "gitops.sluice.dev/GitGate/health.lua",
	} {
		script, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data[key] != string(script) {
			t.Errorf("data[%s] does not equal %s", key, path)
		}
	}
}
