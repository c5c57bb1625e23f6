package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	gh "github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/internal/bounded"
)

// AppClient is a Client that authenticates as a GitHub App installation. Besides what every
// Client does, it keeps check runs (scm.CheckRunWriter): GitHub lets only Apps write them,
// and the check runs of the App's own id are the ones it looks for.
type AppClient struct {
	*Client
	appID int64

	runsMu sync.Mutex
	runs   *runMemory
}

// The capabilities an AppClient implements besides the Client's.
var (
	_ scm.Client         = (*AppClient)(nil)
	_ scm.CheckRunWriter = (*AppClient)(nil)
)

// NewApp builds an AppClient from opts, which must carry App credentials.
func NewApp(opts Options) (*AppClient, error) {
	if opts.App == nil {
		return nil, errors.New("github: check runs need a GitHub App's credentials")
	}
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	return &AppClient{Client: c, appID: opts.App.AppID, runs: newRunMemory(withDefaults(opts).CommentCacheSize)}, nil
}

// checkRunBody is the body of a check run's create or update request. It is sluice's own
// rather than go-github's options, whose actions are omitted when empty: an update that takes
// a check run's buttons away must send an empty list.
type checkRunBody struct {
	Name       string               `json:"name"`
	HeadSHA    string               `json:"head_sha,omitempty"`
	DetailsURL *string              `json:"details_url,omitempty"`
	ExternalID string               `json:"external_id"`
	Status     string               `json:"status"`
	Conclusion *string              `json:"conclusion,omitempty"`
	Output     checkRunOutput       `json:"output"`
	Actions    []*gh.CheckRunAction `json:"actions"`
}

type checkRunOutput struct {
	Title   string `json:"title"`
	Summary string `json:"summary"`
}

// SetCheckRun implements scm.CheckRunWriter. Calls are serialised. For a (sha, name) it has not
// seen since it started, it lists the App's latest check run of that name on the commit first.
// A failed request is forgotten: the next call reads the check run again.
func (a *AppClient) SetCheckRun(ctx context.Context, sha string, run scm.CheckRun) (bool, error) {
	run, err := run.Validate()
	if err != nil {
		return false, err
	}
	key := sha + "\x00" + strings.ToLower(run.Name)
	a.runsMu.Lock()
	defer a.runsMu.Unlock()
	last, known := a.runs.Get(key)
	if !known {
		if last, known, err = a.latestRun(ctx, sha, run.Name); err != nil {
			return false, err
		}
		if known {
			a.runs.Put(key, last)
		}
	}
	if known && last.run.Same(run) {
		return false, nil
	}
	body := checkRunBody{Name: run.Name, ExternalID: run.ExternalID, DetailsURL: optional(run.DetailsURL), Status: string(run.Status),
		Output: checkRunOutput{Title: run.Title, Summary: run.Summary}, Actions: []*gh.CheckRunAction{}}
	if run.Conclusion != "" {
		body.Conclusion = gh.String(string(run.Conclusion))
	}
	for _, act := range run.Actions {
		body.Actions = append(body.Actions, &gh.CheckRunAction{Label: act.Label, Description: act.Description, Identifier: act.Identifier})
	}
	var req *http.Request
	// A completed check run is not taken back to in progress: a new one follows it, as a
	// re-run does on GitHub.
	if known && (last.run.Status != scm.CheckCompleted || run.Status == scm.CheckCompleted) {
		req, err = a.gh.NewRequest(http.MethodPatch, fmt.Sprintf("repos/%s/%s/check-runs/%d", a.owner, a.repo, last.id), body)
	} else {
		body.HeadSHA = sha
		req, err = a.gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/check-runs", a.owner, a.repo), body)
	}
	if err != nil {
		return false, err
	}
	out := &gh.CheckRun{}
	resp, err := a.gh.Do(ctx, req, out)
	if err != nil {
		a.runs.Forget(key)
		return false, mapError(err, resp, "writing check run "+run.Name+" of commit "+sha, a.now())
	}
	if out.GetID() == 0 {
		a.runs.Forget(key)
		return true, errors.New("github answered the check run without its id")
	}
	a.runs.Put(key, postedRun{id: out.GetID(), run: run})
	return true, nil
}

// latestRun finds the App's newest check run named name on sha. GitHub does not return a
// check run's actions, so one found this way is updated once, to put sluice's buttons back.
func (a *AppClient) latestRun(ctx context.Context, sha, name string) (postedRun, bool, error) {
	opts := &gh.ListCheckRunsOptions{CheckName: gh.String(name), Filter: gh.String("latest"), AppID: gh.Int64(a.appID),
		ListOptions: gh.ListOptions{PerPage: 100}}
	list, resp, err := a.gh.Checks.ListCheckRunsForRef(ctx, a.owner, a.repo, sha, opts)
	if err != nil {
		return postedRun{}, false, mapError(err, resp, "listing the check runs of commit "+sha, a.now())
	}
	for _, cr := range list.CheckRuns {
		if cr.GetApp() != nil && cr.GetApp().GetID() != 0 && cr.GetApp().GetID() != a.appID {
			continue
		}
		if !strings.EqualFold(cr.GetName(), name) {
			continue
		}
		found := scm.CheckRun{
			Name: cr.GetName(), ExternalID: cr.GetExternalID(), DetailsURL: cr.GetDetailsURL(),
			Status: scm.CheckRunStatus(cr.GetStatus()), Conclusion: scm.CheckConclusion(cr.GetConclusion()),
			Title: cr.GetOutput().GetTitle(), Summary: cr.GetOutput().GetSummary(),
		}
		return postedRun{id: cr.GetID(), run: found}, true, nil
	}
	return postedRun{}, false, nil
}

// postedRun is a check run as sluice last wrote or found it.
type postedRun struct {
	id  int64
	run scm.CheckRun
}

// runMemory remembers the check run of each (sha, name), at most size of them; the oldest is
// forgotten first.
type runMemory = bounded.Map[string, postedRun]

func newRunMemory(size int) *runMemory { return bounded.New[string, postedRun](size) }
