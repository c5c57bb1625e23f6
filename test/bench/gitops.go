package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// The GitHub side of the gitops scenario.
const (
	benchRepo     = "acme/bench"
	benchToken    = "bench-bot-token"
	benchSecret   = "bench-webhook-secret"
	benchReviewer = "reviewer"
	gitopsImage   = "registry.example/bench/app:"
)

// gitopsScenario is the gitops benchmark: n Rollouts in one namespace, each
// of a Deployment of two pods, bound to one GitGate; the commits come in
// prs pull requests, each bumping n/prs of the apps. The GitOps tool's
// apply is the scenario's own patch of the Deployment (image and the
// sluice.dev/revision annotation naming the merge commit): the benchmark
// measures sluice, not a GitOps tool.
type gitopsScenario struct {
	c        client.WithWatch
	runID    string
	ns       string
	n, prs   int
	repo     gitopsworld.Repo
	gh       *githubfake.Server
	hookURL  string
	progress io.Writer
}

// gitopsResult is what the gitops scenario measured.
type gitopsResult struct {
	Rollouts, PullRequests int
	// ApprovalIntent is, per Rollout, the seconds from the label delivery
	// to the GitGate's approval written on the Rollout (the GitOps read
	// path); Approval to the first write of the next batch to its workload
	// (the read path and the Rollout controller's step).
	ApprovalIntent, Approval []float64
	// RevertIntent is, per Rollout, the seconds from the revert's push
	// delivery to the GitGate's abort written on the Rollout.
	RevertIntent []float64
	// RevertWrite and RevertStable are, per Rollout, the seconds from the
	// revert's push delivery to the first write of the abort to its
	// workload, and to every pod (so all of the Service's traffic) being
	// on the stable revision.
	RevertWrite, RevertStable []float64
	// GitHubPerRollout is the GitHub requests of one release per Rollout:
	// from the merge to the success status, labels and all.
	GitHubPerRollout float64
	// GitHubPerIdleHour is the GitHub requests an hour of the gate polling
	// with nothing happening costs at the default interval (one minute).
	GitHubPerIdleHour float64
	// GitHubPerIdleReconcile is the GitHub requests of one idle reconcile.
	GitHubPerIdleReconcile float64
	// GitHubByOperation is GitHubPerRollout by GitHub operation (304s
	// included: they cost no rate limit, but they are requests).
	GitHubByOperation map[string]float64
	// GitHubSpentPerRollout is GitHubPerRollout less the requests answered
	// 304 Not Modified (conditional GETs, which GitHub does not count
	// against the rate limit).
	GitHubSpentPerRollout float64
}

func (s *gitopsScenario) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(s.progress, "bench: "+format+"\n", args...)
}

func (s *gitopsScenario) app(i int) string { return fmt.Sprintf("app-%03d", i) }

// group is the pull request (0-based) that bumps app i.
func (s *gitopsScenario) group(i int) int { return i * s.prs / s.n }

// freeAddr is a free loopback address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// benchReporter reports what the GitHub stand-in finds wrong.
type benchReporter struct{ w io.Writer }

func (r benchReporter) Errorf(format string, args ...any) {
	_, _ = fmt.Fprintf(r.w, "bench: github stand-in: "+format+"\n", args...)
}

// setupGitOps creates the Git repository, the fake GitHub's, the
// namespace, the Deployments, Rollouts and the GitGate, and waits until the
// gate binds every Rollout.
func (s *gitopsScenario) setup(ctx context.Context, gitSrv *gitserver.Server) error {
	gh, err := githubfake.New(benchReporter{s.progress})
	if err != nil {
		return err
	}
	s.gh = gh
	gh.CreateRepo(benchRepo, "main", map[string]string{"README.md": "bench\n"})
	gh.AddToken(benchToken, "sluice-bot")
	gh.SetRole(benchRepo, "sluice-bot", githubfake.RoleWrite)
	gh.SetRole(benchRepo, benchReviewer, githubfake.RoleWrite)
	repo, err := gitSrv.CreateRepo(s.ns+".git", "main")
	if err != nil {
		return err
	}
	s.repo = gitopsworld.Repo{Git: repo, GitHub: gh, Name: benchRepo}
	files := map[string]string{}
	for i := range s.n {
		files["apps/"+s.app(i)+".yaml"] = "image: v1\n"
	}
	first, err := repo.Commit("main", gitserver.Change{Message: "Add the apps", Files: files})
	if err != nil {
		return err
	}
	if err := s.repo.Mirror("main", first); err != nil {
		return err
	}
	if err := s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns, Labels: map[string]string{benchLabel: s.runID}}}); err != nil {
		return err
	}
	for _, sec := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "github"}, StringData: map[string]string{"token": benchToken}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "hook"}, StringData: map[string]string{"token": benchSecret}},
	} {
		if err := s.c.Create(ctx, sec); err != nil {
			return err
		}
	}
	for i := range s.n {
		if err := s.c.Create(ctx, s.deployment(i, first)); err != nil {
			return fmt.Errorf("creating deployment %s: %w", s.app(i), err)
		}
	}
	if err := s.pollAll(ctx, "deployments available", func(d *appsv1.Deployment, _ *rolloutsv1beta1.Rollout) bool {
		return d.Status.AvailableReplicas == 2 && d.Status.UpdatedReplicas == 2
	}, false); err != nil {
		return err
	}
	for i := range s.n {
		if err := s.c.Create(ctx, s.rollout(i)); err != nil {
			return fmt.Errorf("creating rollout %s: %w", s.app(i), err)
		}
	}
	if err := s.pollAll(ctx, "rollouts healthy", func(_ *appsv1.Deployment, ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	}, true); err != nil {
		return err
	}
	gate := &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "bench"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git:              gitopsv1alpha1.GitSource{URL: repo.URL(), Branch: "main"},
			GitHub:           &gitopsv1alpha1.GitHubRepository{Repository: benchRepo, APIURL: gh.URL, SecretRef: meta.LocalObjectReference{Name: "github"}},
			WebhookSecretRef: &meta.LocalObjectReference{Name: "hook"},
			RolloutSelector:  metav1.LabelSelector{MatchLabels: map[string]string{benchLabel: s.runID}},
			Revision:         gitopsv1alpha1.RevisionSource{From: "Annotation"},
		},
	}
	if err := s.c.Create(ctx, gate); err != nil {
		return err
	}
	return s.pollGate(ctx, "gate bound", func(g *gitopsv1alpha1.GitGate) bool { return int(g.Status.BoundRollouts) == s.n })
}

// deployment is app i's Deployment at revision sha, image v1.
func (s *gitopsScenario) deployment(i int, sha string) *appsv1.Deployment {
	two := int32(2)
	labels := map[string]string{"app": s.app(i)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.app(i), Annotations: map[string]string{
			gitopsv1alpha1.DefaultRevisionAnnotation: sha,
			// Its manifest's path: of the commits a revision brings, only
			// those that changed it are the release's (one pull request per
			// group, not every merge since the last sync).
			gitopsv1alpha1.RevisionPathAnnotation: "apps/" + s.app(i) + ".yaml",
		}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &two,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: gitopsImage + "v1"}}},
			},
		},
	}
}

// rollout is app i's Rollout: one pod, waiting for an approval; then all.
func (s *gitopsScenario) rollout(i int) *rolloutsv1beta1.Rollout {
	one, all := intstr.FromInt32(1), intstr.FromString("100%")
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.app(i), Labels: map[string]string{benchLabel: s.runID}},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: s.app(i)},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				{Replicas: &one}, {Replicas: &all},
			}}},
		},
	}
}

// release merges one pull request per group bumping its apps to tag,
// applies each merge as a GitOps tool would, and waits until every Rollout
// is paused at step 1 with its pending status posted. It returns the pull
// requests and their merge commits.
func (s *gitopsScenario) release(ctx context.Context, tag string) (prs []int, merges []string, err error) {
	for k := range s.prs {
		files := map[string]string{}
		for i := range s.n {
			if s.group(i) == k {
				files["apps/"+s.app(i)+".yaml"] = "image: " + tag + "\n"
			}
		}
		pr, merge, err := s.repo.MergePullRequest(fmt.Sprintf("Bump group %d to %s", k, tag), "dev", benchReviewer, files)
		if err != nil {
			return nil, nil, err
		}
		prs, merges = append(prs, pr), append(merges, merge)
	}
	for i := range s.n {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`,
			gitopsv1alpha1.DefaultRevisionAnnotation, merges[s.group(i)], gitopsImage+tag)
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.app(i)}}
		if err := s.c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("gitops-tool")); err != nil {
			return nil, nil, err
		}
	}
	err = s.pollAll(ctx, "rollouts paused at step 1", func(_ *appsv1.Deployment, ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == 1 && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	}, true)
	if err != nil {
		return nil, nil, err
	}
	err = s.pollStatuses(ctx, merges, "pending", "step 1/2 paused")
	return prs, merges, err
}

// pollStatuses waits until every app's newest status on its group's commit
// has state and a description starting with prefix.
func (s *gitopsScenario) pollStatuses(ctx context.Context, shas []string, state, prefix string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, setupLimit, true, func(context.Context) (bool, error) {
		for i := range s.n {
			want := "sluice/" + s.ns + "/" + s.app(i)
			found := false
			for _, st := range s.gh.Statuses(benchRepo, shas[s.group(i)]) {
				if st.Context == want {
					found = st.State == state && strings.HasPrefix(st.Description, prefix)
					last = fmt.Sprintf("%s: %s %q", s.app(i), st.State, st.Description)
					break
				}
			}
			if !found {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for statuses %s %q: %w; last seen %s", state, prefix, err, last)
	}
	return nil
}

// pollAll waits until cond holds for every app's Deployment and (when
// withRollout) Rollout.
func (s *gitopsScenario) pollAll(ctx context.Context, what string, cond func(*appsv1.Deployment, *rolloutsv1beta1.Rollout) bool, withRollout bool) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, setupLimit, true, func(ctx context.Context) (bool, error) {
		ds := &appsv1.DeploymentList{}
		if err := s.c.List(ctx, ds, client.InNamespace(s.ns)); err != nil {
			return false, err
		}
		ros := map[string]*rolloutsv1beta1.Rollout{}
		if withRollout {
			list := &rolloutsv1beta1.RolloutList{}
			if err := s.c.List(ctx, list, client.InNamespace(s.ns)); err != nil {
				return false, err
			}
			for i := range list.Items {
				ros[list.Items[i].Name] = &list.Items[i]
			}
		}
		if len(ds.Items) != s.n {
			last = fmt.Sprintf("%d deployments", len(ds.Items))
			return false, nil
		}
		for i := range ds.Items {
			d := &ds.Items[i]
			ro := ros[d.Name]
			if withRollout && ro == nil {
				last = d.Name + ": no rollout"
				return false, nil
			}
			if !cond(d, ro) {
				last = d.Name + ": " + describeRollout(ro)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w; last seen %s", what, err, last)
	}
	return nil
}

// pollGate waits until cond holds for the gate.
func (s *gitopsScenario) pollGate(ctx context.Context, what string, cond func(*gitopsv1alpha1.GitGate) bool) error {
	g := &gitopsv1alpha1.GitGate{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, setupLimit, true, func(ctx context.Context) (bool, error) {
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: "bench"}, g); err != nil {
			return false, err
		}
		return cond(g), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w; gate status %+v", what, err, g.Status)
	}
	return nil
}

// afterSecond waits until the clock is in the second after t: a label of
// the pause's own second does not count.
func afterSecond(ctx context.Context, t time.Time) {
	sleep(ctx, time.Until(t.Truncate(time.Second).Add(time.Second+10*time.Millisecond)))
}

// approve labels every pull request sluice/approve and delivers the
// webhooks at once, and returns, per app, the seconds from its pull
// request's delivery to the first write to its workload.
func (s *gitopsScenario) approve(ctx context.Context, prs []int) (intent, write []float64, err error) {
	ws := newWriteWatch(s.c, s.ns)
	stop, err := ws.start(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	afterSecond(ctx, time.Now())
	delivered := make([]time.Time, len(prs))
	for k, pr := range prs {
		// From the moment the label exists: a reconcile that another
		// delivery started may read it before this delivery is sent.
		delivered[k] = time.Now()
		s.gh.AddLabel(benchRepo, pr, "sluice/approve", benchReviewer)
		d, err := s.gh.DeliverLabel(ctx, s.hookURL, []byte(benchSecret), benchRepo, pr, "sluice/approve", benchReviewer, true)
		if err != nil || d.Status != http.StatusOK {
			return nil, nil, fmt.Errorf("delivering the label of pull request #%d: %d, %w", pr, d.Status, err)
		}
	}
	if intent, err = s.latencies(ctx, ws.firstIntentAfter, delivered, "approvals written"); err != nil {
		return nil, nil, err
	}
	write, err = s.latencies(ctx, ws.firstAfter, delivered, "next batch written")
	return intent, write, err
}

// latencies waits until every app's workload was written after its
// group's delivery, and returns the delays.
func (s *gitopsScenario) latencies(ctx context.Context, firstAfter func(string, time.Time) (time.Time, bool), delivered []time.Time, what string) ([]float64, error) {
	out := make([]float64, s.n)
	missing, example := 0, ""
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, setupLimit, true, func(context.Context) (bool, error) {
		missing = 0
		for i := range s.n {
			at, ok := firstAfter(s.ns+"/"+s.app(i), delivered[s.group(i)])
			if !ok {
				if missing == 0 {
					example = fmt.Sprintf("%s (delivered %s)", s.app(i), delivered[s.group(i)].Format(time.StampMilli))
				}
				missing++
				continue
			}
			out[i] = at.Sub(delivered[s.group(i)]).Seconds()
		}
		return missing == 0, nil
	})
	if err != nil {
		ro := &rolloutsv1beta1.Rollout{}
		name, _, _ := strings.Cut(example, " ")
		if gerr := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: name}, ro); gerr == nil {
			example += fmt.Sprintf(": approve %q, abort %q, %s", ro.Annotations[rolloutsv1beta1.ApproveAnnotation],
				ro.Annotations[rolloutsv1beta1.AbortAnnotation], describeRollout(ro))
		}
		return nil, fmt.Errorf("waiting for %s: %w (%d of %d apps never seen, e.g. %s)", what, err, missing, s.n, example)
	}
	return out, nil
}

// revert reverts every group's merge, pushes and delivers the push webhook
// at once, and returns, per app, the seconds to the abort's first workload
// write and to every pod back on the stable revision.
func (s *gitopsScenario) revert(ctx context.Context, merges []string) (intent, write, stable []float64, err error) {
	ws := newWriteWatch(s.c, s.ns)
	stop, err := ws.start(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer stop()
	delivered := make([]time.Time, len(merges))
	for k, merge := range merges {
		before := s.gh.Branch(benchRepo, "main")
		delivered[k] = time.Now() // from the push on, as for the labels
		after, err := s.repo.Revert(merge)
		if err != nil {
			return nil, nil, nil, err
		}
		d, err := s.gh.DeliverPush(ctx, s.hookURL, []byte(benchSecret), benchRepo, "main", before, after, benchReviewer)
		if err != nil || d.Status != http.StatusOK {
			return nil, nil, nil, fmt.Errorf("delivering the push of revert %s: %d, %w", after, d.Status, err)
		}
	}
	if intent, err = s.latencies(ctx, ws.firstIntentAfter, delivered, "aborts written"); err != nil {
		return nil, nil, nil, err
	}
	if write, err = s.latencies(ctx, ws.firstAfter, delivered, "abort's workload write"); err != nil {
		return nil, nil, nil, err
	}
	stable = make([]float64, s.n)
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, setupLimit, true, func(ctx context.Context) (bool, error) {
		list := &rolloutsv1beta1.RolloutList{}
		if err := s.c.List(ctx, list, client.InNamespace(s.ns)); err != nil {
			return false, err
		}
		done := 0
		for _, ro := range list.Items {
			i := indexOfApp(ro.Name)
			if i < 0 {
				continue
			}
			if stable[i] == 0 && ro.Status.Aborted != nil && ro.Status.Aborted.Held {
				stable[i] = time.Since(delivered[s.group(i)]).Seconds()
			}
			if stable[i] > 0 {
				done++
			}
		}
		return done == s.n, nil
	})
	return intent, write, stable, err
}

func indexOfApp(name string) int {
	var i int
	if _, err := fmt.Sscanf(name, "app-%03d", &i); err != nil {
		return -1
	}
	return i
}

// idleRequests asks the gate to reconcile n times with nothing to do and
// returns the GitHub requests one such reconcile costs.
func (s *gitopsScenario) idleRequests(ctx context.Context, n int) (float64, error) {
	before := len(s.gh.Requests())
	for k := range n {
		value := fmt.Sprintf("bench-idle-%d-%d", time.Now().UnixNano(), k)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, meta.ReconcileRequestAnnotation, value)
		g := &gitopsv1alpha1.GitGate{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "bench"}}
		if err := s.c.Patch(ctx, g, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return 0, err
		}
		if err := s.pollGate(ctx, "idle reconcile", func(g *gitopsv1alpha1.GitGate) bool { return g.Status.LastHandledReconcileAt == value }); err != nil {
			return 0, err
		}
	}
	return float64(len(s.gh.Requests())-before) / float64(n), nil
}
