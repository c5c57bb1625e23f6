package view

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/web"
	"github.com/sluice-dev/sluice/workload"
)

// agreePod is a pod of revision rev running image.
func agreePod(name, rev, image string, ready bool) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web", "pod-template-hash": rev}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return p
}

// TestStatusAndWebView_describeTheReleaseAlike: kubectl sluice status and
// the web view draw the same Rollout with the same descriptions (style,
// each step's replicas, pause and traffic, the pods of each revision and
// their role), since both take them from release/progress.
func TestStatusAndWebView_describeTheReleaseAlike(t *testing.T) {
	extra := releasing(2, rolloutsv1beta1.CanaryStepStatePaused)
	extra.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = true
	traffic := releasing(2, rolloutsv1beta1.CanaryStepStatePaused)
	traffic.Spec.Strategy.Canary.Steps[0].Traffic = ptr("10%")
	traffic.Spec.Strategy.Canary.Steps[1].Pause.Duration = ptr[int32](30)
	tests := []struct {
		name string
		ro   *rolloutsv1beta1.Rollout
		ws   *workload.Status
	}{
		{name: "canary in place", ro: releasing(2, rolloutsv1beta1.CanaryStepStatePaused), ws: deploymentStatus()},
		{name: "canary with an extra workload", ro: extra, ws: deploymentStatus()},
		{name: "canary with traffic and a timed pause", ro: traffic, ws: deploymentStatus()},
		{name: "blue-green", ro: blueGreen(releasing(3, rolloutsv1beta1.CanaryStepStatePaused)), ws: deploymentStatus()},
		{name: "workload size unknown", ro: releasing(1, rolloutsv1beta1.CanaryStepStatePaused)},
	}
	pods := []corev1.Pod{
		agreePod("a", "stable", "app:v1", true), agreePod("b", "stable", "app:v1", true),
		agreePod("c", "new-h", "app:v2", true), agreePod("d", "new-h", "app:v2", false), agreePod("e", "other", "app:v0", true),
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Status(&b, Snapshot{Rollout: tt.ro, Workload: tt.ws, Pods: pods, Now: now}); err != nil {
				t.Fatal(err)
			}
			text := squeeze(b.String())
			v := web.Build(web.Input{Rollout: tt.ro, Workload: tt.ws, Pods: pods, Now: now})
			want := []string{"(apps/v1), " + v.Style + "\n"}
			for _, s := range v.Steps {
				line := fmt.Sprintf("%d replicas %s pause %s", s.Number, s.Replicas, s.Pause)
				if s.Traffic != "" {
					line += " " + s.Traffic
				}
				want = append(want, line)
			}
			for _, g := range v.Pods {
				want = append(want, fmt.Sprintf("%s %s %d %d %s\n", g.Revision, g.Role, g.Pods, g.Ready, strings.Join(g.Images, ",")))
			}
			if row, sum := RowOf(tt.ro, tt.ws, now), web.Summaries([]rolloutsv1beta1.Rollout{*tt.ro}); row.Step != sum[0].Step {
				t.Errorf("get rollouts says step %q, the web index %q", row.Step, sum[0].Step)
			}
			w := progress.WaitOf(tt.ro)
			switch w.Kind {
			case progress.WaitApproval:
				want = append(want, fmt.Sprintf("Step %d/%d of revision %s waits for approval", w.Step, w.Steps, v.NewRevision))
			case progress.WaitPause:
				want = append(want, fmt.Sprintf("Step %d/%d pauses for %ds", w.Step, w.Steps, w.Seconds))
			case progress.WaitFrozen, progress.WaitNothing:
			}
			if (v.Waiting == "") != (w.Kind == progress.WaitNothing) {
				t.Errorf("the web view says the release waits for %q, kubectl sluice for %+v", v.Waiting, w)
			}
			if tt.ws != nil && len(v.Pods) != 3 {
				t.Fatalf("web view pods = %+v, want three revisions", v.Pods)
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("kubectl sluice status lacks the web view's %q:\n%s", w, b.String())
				}
			}
		})
	}
}
