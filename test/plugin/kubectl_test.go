package plugin

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Given the plugin built as a binary named kubectl-sluice in a directory on
// PATH
// When the real kubectl runs `kubectl sluice ...`
// Then kubectl finds the plugin, and its commands read the cluster named
// by KUBECONFIG, print their results, and fail with a message naming the
// object and the fix.
func TestPlugin_binary_runsAsKubectlSluice(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH; this test runs the plugin through it")
	}
	bin := t.TempDir()
	build := exec.CommandContext(ctxFor(t), "go", "build", "-o", filepath.Join(bin, "kubectl-sluice"), "github.com/sluice-dev/sluice/cmd/kubectl-sluice")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-sluice: %v\n%s", err, out)
	}
	ns := newNamespace(t)
	deployment(t, ns, 2, v1)
	createRollout(t, ns, "apps/v1", "Deployment", canary(step("1", nil), step("100%", nil)))

	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+suite.kubeconfig, "HOME="+t.TempDir())
	kubectlRun := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctxFor(t), kubectl, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		t.Logf("$ kubectl %s\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
		return stdout.String(), stderr.String(), err
	}

	out, _, err := kubectlRun("plugin", "list")
	if err != nil || !strings.Contains(out, filepath.Join(bin, "kubectl-sluice")) {
		t.Fatalf("kubectl plugin list does not list the plugin: %v", err)
	}
	out, _, err = kubectlRun("sluice", "get", "rollouts", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	assertContains(t, "kubectl sluice get rollouts", out, "NAME PHASE STEP STATE WORKLOAD REVISION READY AGE", "web Healthy 2/2 Completed Deployment/web")
	out, _, err = kubectlRun("sluice", "status", "web", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	assertContains(t, "kubectl sluice status", out, "Rollout: "+ns+"/web", "Phase: Healthy")
	_, stderr, err := kubectlRun("sluice", "approve", "web", "-n", ns)
	if err == nil || !strings.Contains(stderr, "Error: rollout "+ns+"/web has no release in progress") {
		t.Fatalf("kubectl sluice approve without a release: %v, %s", err, stderr)
	}
	out, _, err = kubectlRun("sluice", "completion", "bash")
	if err != nil || !strings.Contains(out, "bash completion") {
		t.Fatalf("kubectl sluice completion bash: %v", err)
	}
}
