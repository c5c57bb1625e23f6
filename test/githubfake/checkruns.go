package githubfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// checkRun is a check run.
type checkRun struct {
	id                     int64
	app                    int64
	headSHA, name          string
	externalID, detailsURL string
	status, conclusion     string
	title, summary         string
	actions                []CheckRunAction
	startedAt              time.Time
	completedAt            time.Time
	updates                int
}

// CheckRunAction is a button of a check run (a requested action).
type CheckRunAction struct {
	// Label is the button's text.
	Label string `json:"label"`
	// Description says what it does.
	Description string `json:"description"`
	// Identifier is what a press delivers back.
	Identifier string `json:"identifier"`
}

// CheckRun is a check run as the fake stores it.
type CheckRun struct {
	// ID is the check run's id.
	ID int64
	// App is the id of the App that wrote it.
	App int64
	// HeadSHA is the commit it is on.
	HeadSHA string
	// Name, ExternalID and DetailsURL are as written.
	Name, ExternalID, DetailsURL string
	// Status and Conclusion are where it is and how it ended.
	Status, Conclusion string
	// Title and Summary are its output.
	Title, Summary string
	// Actions are its buttons.
	Actions []CheckRunAction
	// Updates counts the updates after it was created.
	Updates int
}

// CheckRuns returns the check runs on the commit sha, oldest first.
func (s *Server) CheckRuns(fullName, sha string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, cr := range s.mustRepo(fullName).checkRuns {
		if cr.headSHA == sha {
			out = append(out, CheckRun{ID: cr.id, App: cr.app, HeadSHA: cr.headSHA, Name: cr.name, ExternalID: cr.externalID,
				DetailsURL: cr.detailsURL, Status: cr.status, Conclusion: cr.conclusion, Title: cr.title, Summary: cr.summary,
				Actions: append([]CheckRunAction(nil), cr.actions...), Updates: cr.updates})
		}
	}
	return out
}

// checkRunInput is the body of checks/create and checks/update; a nil field was not sent.
type checkRunInput struct {
	Name       *string `json:"name"`
	HeadSHA    string  `json:"head_sha"`
	DetailsURL *string `json:"details_url"`
	ExternalID *string `json:"external_id"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	Output     *struct {
		Title   string `json:"title"`
		Summary string `json:"summary"`
	} `json:"output"`
	Actions *[]CheckRunAction `json:"actions"`
}

// appOnly refuses a call not made with an App's installation token: GitHub lets only Apps
// write check runs.
func appOnly(c *call) error {
	if c.token.app == 0 {
		return fail(http.StatusForbidden, "You must authenticate via a GitHub App.")
	}
	return nil
}

// apply sets the fields the input carries; a conclusion completes the check run.
func (s *Server) applyCheckRun(cr *checkRun, in checkRunInput) {
	if in.Name != nil {
		cr.name = *in.Name
	}
	if in.DetailsURL != nil {
		cr.detailsURL = *in.DetailsURL
	}
	if in.ExternalID != nil {
		cr.externalID = *in.ExternalID
	}
	if in.Status != nil {
		cr.status = *in.Status
	}
	if in.Output != nil {
		cr.title, cr.summary = in.Output.Title, in.Output.Summary
	}
	if in.Actions != nil {
		cr.actions = append([]CheckRunAction(nil), (*in.Actions)...)
	}
	cr.conclusion = ""
	if in.Conclusion != nil {
		cr.conclusion, cr.status = *in.Conclusion, "completed"
	}
	if cr.status == "completed" {
		cr.completedAt = s.clock()
	} else {
		cr.completedAt = time.Time{}
	}
}

// createCheckRun serves POST /repos/{owner}/{repo}/check-runs.
func (s *Server) createCheckRun(c *call) (int, any, error) {
	if err := appOnly(c); err != nil {
		return 0, nil, err
	}
	var in checkRunInput
	if err := json.Unmarshal(c.body, &in); err != nil {
		return 0, nil, fail(http.StatusBadRequest, "Problems parsing JSON")
	}
	if c.repo.commits[in.HeadSHA] == nil {
		return 0, nil, fail(http.StatusUnprocessableEntity, "No commit found for SHA: %s", in.HeadSHA)
	}
	s.nextID++
	cr := &checkRun{id: s.nextID, app: c.token.app, headSHA: in.HeadSHA, status: "queued", startedAt: s.clock()}
	s.applyCheckRun(cr, in)
	c.repo.checkRuns = append(c.repo.checkRuns, cr)
	return http.StatusCreated, s.checkRunJSON(c.repo, cr), nil
}

// updateCheckRun serves PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}: an App may
// update only its own check runs.
func (s *Server) updateCheckRun(c *call) (int, any, error) {
	if err := appOnly(c); err != nil {
		return 0, nil, err
	}
	var in checkRunInput
	if err := json.Unmarshal(c.body, &in); err != nil {
		return 0, nil, fail(http.StatusBadRequest, "Problems parsing JSON")
	}
	id, _ := strconv.ParseInt(c.params["check_run_id"], 10, 64)
	for _, cr := range c.repo.checkRuns {
		if cr.id != id {
			continue
		}
		if cr.app != c.token.app {
			return 0, nil, fail(http.StatusForbidden, "Invalid app_id `%d` - check run can only be modified by the GitHub App that created it.", c.token.app)
		}
		s.applyCheckRun(cr, in)
		cr.updates++
		return http.StatusOK, s.checkRunJSON(c.repo, cr), nil
	}
	return 0, nil, fail(http.StatusNotFound, "Not Found")
}

// listCheckRunsForRef serves GET /repos/{owner}/{repo}/commits/{ref}/check-runs with its
// check_name, status, app_id and filter (latest: the newest check run of each name and App,
// the default; all) parameters, newest first.
func (s *Server) listCheckRunsForRef(c *call) (int, any, error) {
	sha := s.resolve(c.repo, c.params["ref"])
	if sha == "" {
		return 0, nil, fail(http.StatusUnprocessableEntity, "No commit found for SHA: %s", c.params["ref"])
	}
	q := c.req.URL.Query()
	latest := q.Get("filter") != "all"
	var runs []*checkRun
	for _, cr := range c.repo.checkRuns {
		if cr.headSHA != sha || q.Get("check_name") != "" && cr.name != q.Get("check_name") ||
			q.Get("status") != "" && cr.status != q.Get("status") || q.Get("app_id") != "" && itoa(cr.app) != q.Get("app_id") {
			continue
		}
		runs = append(runs, cr)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].id > runs[j].id })
	seen := map[string]bool{}
	var items []any
	for _, cr := range runs {
		k := cr.name + "\x00" + itoa(cr.app)
		if latest && seen[k] {
			continue
		}
		seen[k] = true
		items = append(items, s.checkRunJSON(c.repo, cr))
	}
	total := len(items)
	return http.StatusOK, map[string]any{"total_count": total, "check_runs": page(c, items)}, nil
}

// checkRunJSON is a check-run object.
func (s *Server) checkRunJSON(r *repository, cr *checkRun) map[string]any {
	var completed, conclusion any
	if cr.status == "completed" {
		completed, conclusion = stamp(cr.completedAt), cr.conclusion
	}
	url := s.apiURL("repos/%s/%s/check-runs/%d", r.owner, r.name, cr.id)
	return map[string]any{
		"id": cr.id, "node_id": "CR_" + itoa(cr.id), "head_sha": cr.headSHA, "name": cr.name, "url": url,
		"html_url": fmt.Sprintf("%s%s/%s/runs/%d", s.htmlRoot(), r.owner, r.name, cr.id), "details_url": nullable(cr.detailsURL),
		"status": cr.status, "conclusion": conclusion, "started_at": stamp(cr.startedAt), "completed_at": completed,
		"external_id": nullable(cr.externalID), "check_suite": map[string]any{"id": cr.id},
		"output": map[string]any{"title": nullable(cr.title), "summary": nullable(cr.summary), "text": nil, "annotations_count": 0,
			"annotations_url": url + "/annotations"},
		"app": s.appJSON(s.appByID(cr.app)), "pull_requests": []any{},
	}
}

// DeliverRequestedAction sends the check_run "requested_action" delivery GitHub sends to an
// App's webhook when sender presses the button identifier of check run id: to url, signed
// with secret. The payload is built from the check run as stored and validated against
// @octokit/webhooks-schemas like every other delivery.
func (s *Server) DeliverRequestedAction(ctx context.Context, url string, secret []byte, fullName string, id int64, identifier, sender string) (Delivery, error) {
	s.mu.Lock()
	r := s.mustRepo(fullName)
	var cr *checkRun
	for _, c := range r.checkRuns {
		if c.id == id {
			cr = c
		}
	}
	if cr == nil {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("no check run %d", id)
	}
	run := s.checkRunJSON(r, cr)
	a := s.appByID(cr.app)
	app := s.appJSON(a)
	delete(app, "client_id")
	delete(app, "installations_count")
	run["app"] = app
	delete(run, "details_url")
	if cr.detailsURL != "" {
		run["details_url"] = cr.detailsURL
	}
	run["external_id"] = cr.externalID
	run["output"] = map[string]any{"title": cr.title, "summary": cr.summary, "text": nil, "annotations_count": 0,
		"annotations_url": s.apiURL("repos/%s/%s/check-runs/%d/annotations", r.owner, r.name, cr.id)}
	run["check_suite"] = map[string]any{
		"id": cr.id, "node_id": "CS_" + itoa(cr.id), "head_branch": nil, "head_sha": cr.headSHA, "status": cr.status,
		"conclusion": run["conclusion"], "url": s.apiURL("repos/%s/%s/check-suites/%d", r.owner, r.name, cr.id),
		"before": nil, "after": cr.headSHA, "pull_requests": []any{}, "app": app,
		"created_at": stamp(cr.startedAt), "updated_at": stamp(s.clock()),
	}
	values := map[string]any{
		"action": "requested_action", "check_run": run, "requested_action": map[string]any{"identifier": identifier},
		"repository": s.repoJSON(r), "sender": s.user(sender),
	}
	if a != nil {
		values["installation"] = map[string]any{"id": a.installationID, "node_id": "I_" + itoa(a.installationID)}
	}
	s.mu.Unlock()
	body, err := s.hooks.build("check_run$requested_action", values)
	if err != nil {
		s.report.Errorf("githubfake: %v", err)
		return Delivery{}, err
	}
	return s.send(ctx, url, secret, "check_run", body)
}

// ValidateWebhook checks a webhook payload a test built by hand against the definition of
// @octokit/webhooks-schemas named after its event and action ("check_run$requested_action",
// "push$event"), so that what a test sends is a real GitHub shape.
func (s *Server) ValidateWebhook(definition string, body []byte) error {
	if !strings.Contains(definition, "$") {
		return fmt.Errorf("definition %q is not event$action", definition)
	}
	return s.hooks.validate(definition, body)
}

// AddCheckRun stores run on its HeadSHA as App appID would create it through the API, and
// returns its id (for tests of what happens to a check run, not of how it is written).
func (s *Server) AddCheckRun(fullName string, appID int64, run CheckRun) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	s.nextID++
	cr := &checkRun{id: s.nextID, app: appID, headSHA: run.HeadSHA, name: run.Name, externalID: run.ExternalID, detailsURL: run.DetailsURL,
		status: run.Status, conclusion: run.Conclusion, title: run.Title, summary: run.Summary,
		actions: append([]CheckRunAction(nil), run.Actions...), startedAt: s.clock()}
	if cr.status == "completed" {
		cr.completedAt = s.clock()
	}
	r.checkRuns = append(r.checkRuns, cr)
	return cr.id
}
