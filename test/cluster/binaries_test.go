package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoModModule(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: "module github.com/sluice-dev/sluice\n\ngo 1.26.0\n", want: modulePath},
		{name: "quoted", in: "// comment\nmodule \"example.com/x\"\n", want: "example.com/x"},
		{name: "no module line", in: "go 1.26.0\n", want: ""},
		{name: "module word inside a line", in: "require module v1.0.0\n", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := goModModule([]byte(tt.in)); got != tt.want {
				t.Errorf("goModModule() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestModuleRoot_skipsNestedModules(t *testing.T) {
	root := t.TempDir()
	nested := filepath.Join(root, "hack", "controlplane", "kwok")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir, module string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+module+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root, modulePath)
	write(nested, modulePath+"/hack/controlplane/kwok")

	got, err := moduleRoot(nested)
	if err != nil {
		t.Fatal(err)
	}
	if got != root {
		t.Errorf("moduleRoot() = %s, want %s", got, root)
	}
	if _, err := moduleRoot(t.TempDir()); err == nil {
		t.Error("moduleRoot() outside the module: want an error")
	}
}

func TestCheckBinaries_namesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{etcdBinary, kwokBinary} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	err := checkBinaries(dir)
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver, kube-controller-manager, kube-scheduler, kwok-stages.yaml") {
		t.Errorf("checkBinaries() = %v, want the missing files listed", err)
	}
}

func TestLastLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "", want: ""},
		{in: "/a\n", want: "/a"},
		{in: "progress\n/cache/dir\n\n", want: "/cache/dir"},
	}
	for _, tt := range tests {
		if got := lastLine(tt.in); got != tt.want {
			t.Errorf("lastLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
