package github

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// newAppClient registers App 4711 (installation 99, slug "sluice") on the fake, which then
// runs on the real clock (ghinstallation times its JWTs by time.Now), and builds its client;
// it returns the client's options too, to build another.
func newAppClient(t *testing.T, fake *githubfake.Server) (*AppClient, Options) {
	t.Helper()
	fake.SetClock(time.Now)
	key, keyPEM := appKey(t)
	fake.AddApp(4711, "", 99, &key.PublicKey, "sluice", time.Hour)
	opts := Options{Owner: "acme", Repo: "app", BaseURL: fake.URL, App: &AppCredentials{AppID: 4711, InstallationID: 99, PrivateKeyPEM: keyPEM}}
	c, err := NewApp(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, opts
}

func paused(step string, actions ...scm.CheckAction) scm.CheckRun {
	return scm.CheckRun{Name: "sluice/prod/checkout", ExternalID: "prod/checkout", DetailsURL: "https://sluice.example/prod/checkout",
		Status: scm.CheckInProgress, Title: "Step " + step + " paused", Summary: "### prod/checkout\n\nstep " + step, Actions: actions}
}

var approve1 = scm.CheckAction{Label: "Approve step 1", Description: "Release step 2 of 3", Identifier: "approve-1"}

// One check run per name on the commit: created once with its buttons, updated in place when
// it changes (buttons taken away too), not written when it does not, and followed by a new one
// when a completed run is to be in progress again.
func TestSetCheckRun_createsUpdatesInPlaceAndSkipsUnchanged(t *testing.T) {
	fake, sha := startFake(t, newClock())
	c, opts := newAppClient(t, fake)
	ctx := context.Background()
	set := func(c *AppClient, run scm.CheckRun, wantPosted bool) {
		t.Helper()
		posted, err := c.SetCheckRun(ctx, sha, run)
		if err != nil {
			t.Fatalf("SetCheckRun(%s): %v", run.Title, err)
		}
		if posted != wantPosted {
			t.Fatalf("SetCheckRun(%s) posted = %v, want %v", run.Title, posted, wantPosted)
		}
	}

	set(c, paused("1/3", approve1), true)
	set(c, paused("1/3", approve1), false)
	set(c, paused("2/3"), true)
	runs := fake.CheckRuns(testRepo, sha)
	if len(runs) != 1 || runs[0].Updates != 1 || runs[0].Title != "Step 2/3 paused" || len(runs[0].Actions) != 0 ||
		runs[0].ExternalID != "prod/checkout" || runs[0].App != 4711 || runs[0].Status != "in_progress" {
		t.Fatalf("check runs = %+v, want one, updated once to step 2 without buttons", runs)
	}

	// A client started afresh finds the App's run and updates it (GitHub does not return a run's
	// buttons, so it writes them back once), then leaves it alone.
	again, err := NewApp(opts)
	if err != nil {
		t.Fatal(err)
	}
	set(again, paused("2/3", approve1), true)
	set(again, paused("2/3", approve1), false)
	done := scm.CheckRun{Name: "sluice/prod/checkout", ExternalID: "prod/checkout", Status: scm.CheckCompleted, Conclusion: scm.ConclusionFailure,
		Title: "Rolled back at step 2/3", Summary: "rolled back"}
	set(again, done, true)
	if runs := fake.CheckRuns(testRepo, sha); len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "failure" || runs[0].Updates != 3 {
		t.Fatalf("check runs = %+v, want the one run completed with failure", runs)
	}
	// Retried: in progress again is a new run.
	set(again, paused("1/3", approve1), true)
	if runs := fake.CheckRuns(testRepo, sha); len(runs) != 2 || runs[1].Status != "in_progress" || runs[0].Conclusion != "failure" {
		t.Fatalf("check runs = %+v, want the failed one and a new one in progress", runs)
	}
	if n := fake.Count("checks/create"); n != 2 {
		t.Fatalf("check runs created = %d, want 2", n)
	}
}

// GitHub's limits are checked before anything is sent.
func TestCheckRun_validate(t *testing.T) {
	long := "123456789012345678901"
	tests := []struct {
		name    string
		run     scm.CheckRun
		wantErr bool
	}{
		{name: "paused with a button", run: paused("1/3", approve1)},
		{name: "no name", run: scm.CheckRun{Status: scm.CheckInProgress, Title: "x"}, wantErr: true},
		{name: "no title", run: scm.CheckRun{Name: "n", Status: scm.CheckInProgress}, wantErr: true},
		{name: "in progress with a conclusion", run: scm.CheckRun{Name: "n", Title: "t", Status: scm.CheckInProgress, Conclusion: scm.ConclusionSuccess}, wantErr: true},
		{name: "completed without a conclusion", run: scm.CheckRun{Name: "n", Title: "t", Status: scm.CheckCompleted}, wantErr: true},
		{name: "four buttons", run: paused("1/3", approve1, approve1, approve1, approve1), wantErr: true},
		{name: "label of 21", run: paused("1/3", scm.CheckAction{Label: long, Description: "d", Identifier: "i"}), wantErr: true},
		{name: "identifier of 21", run: paused("1/3", scm.CheckAction{Label: "l", Description: "d", Identifier: long}), wantErr: true},
		{name: "description of 41", run: paused("1/3", scm.CheckAction{Label: "l", Description: long + long, Identifier: "i"}), wantErr: true},
		{name: "empty identifier", run: paused("1/3", scm.CheckAction{Label: "l", Description: "d"}), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.run.Validate(); (err != nil) != tt.wantErr {
				t.Fatalf("Validate() error = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

// A token cannot write check runs: GitHub answers 403, which the controller takes as "no check
// runs here"; the factory builds check runs only for App credentials.
func TestFactory_checkRunsOnlyForApps(t *testing.T) {
	_, keyPEM := appKey(t)
	token, err := Factory(scm.Config{Repository: "acme/app", Secret: map[string][]byte{"token": []byte("t")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := token.(scm.CheckRunWriter); ok {
		t.Fatal("a token's client offers check runs")
	}
	app, err := Factory(scm.Config{Repository: "acme/app", Secret: map[string][]byte{"appID": []byte("1"), "installationID": []byte("2"), "privateKey": keyPEM}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := app.(scm.CheckRunWriter); !ok {
		t.Fatal("an App's client offers no check runs")
	}
}
