package approval

import (
	"slices"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    Approval
		wantErr bool
	}{
		{name: "bare step", value: "2", want: Approval{Step: 2}},
		{name: "key value", value: "step=3,revision=abc", want: Approval{Step: 3, Revision: "abc"}},
		{name: "spaces", value: " step = 3 , revision = abc ", want: Approval{Step: 3, Revision: "abc"}},
		{name: "json", value: `{"revision":"r1","step":1,"by":"alice","via":"annotation"}`, want: Approval{Revision: "r1", Step: 1, By: "alice", Via: "annotation"}},
		{name: "commit sha", value: "step=2,revision=7778b69", want: Approval{Step: 2, Revision: "7778b69"}},
		{name: "every step of a commit", value: "step=all,revision=7778b69855", want: Approval{Step: AllSteps, Revision: "7778b69855"}},
		{name: "empty", value: "", wantErr: true},
		{name: "zero step", value: "0", wantErr: true},
		{name: "negative step", value: "step=-1", wantErr: true},
		{name: "unknown key", value: "stage=1", wantErr: true},
		{name: "not a number", value: "step=two", wantErr: true},
		{name: "broken json", value: `{"step":`, wantErr: true},
		{name: "garbage", value: "approve please", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.value)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse(%q) error = %v, wantErr %v", tt.value, err, tt.wantErr)
			}
			if err == nil && (got.Step != tt.want.Step || got.Revision != tt.want.Revision || got.By != tt.want.By || got.Via != tt.want.Via) {
				t.Fatalf("Parse(%q) = %+v, want %+v", tt.value, got, tt.want)
			}
		})
	}
}

func TestCovers(t *testing.T) {
	a := Approval{Revision: "r1", Step: 2}
	tests := []struct {
		name     string
		a        Approval
		revision string
		step     int32
		want     bool
	}{
		{"same step", a, "r1", 2, true},
		{"earlier step", a, "r1", 1, true},
		{"later step", a, "r1", 3, false},
		{"other revision", a, "r2", 1, false},
		{"unpinned revision approves nothing", Approval{Step: 5}, "", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Covers(tt.revision, tt.step); got != tt.want {
				t.Fatalf("Covers(%q, %d) = %v, want %v", tt.revision, tt.step, got, tt.want)
			}
		})
	}
}

func TestAppend_keepsNewestAndSurvivesDamage(t *testing.T) {
	raw := "not json"
	var err error
	at := time.Unix(0, 0).UTC()
	for i := range maxRecords + 5 {
		raw, err = Append(raw, Approval{Revision: "r", Step: int32(i + 1), At: &at}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
	}
	records, err := Records(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != maxRecords || records[len(records)-1].Step != maxRecords+5 {
		t.Fatalf("got %d records ending at step %d", len(records), records[len(records)-1].Step)
	}
}

// The same approval applied again (after a restart between recording it
// and the status that moves the step on) is recorded once; another step,
// another revision, a retry in between or a record from before the step
// entered its state (an earlier release of the same revision) is a record
// of its own.
func TestAppend_sameApprovalAgain_recordedOnce(t *testing.T) {
	at := time.Unix(0, 0).UTC()
	later := at.Add(time.Minute)
	tests := []struct {
		name  string
		since time.Time // when the step entered its state; the zero time when unset
		apply []Approval
		want  []int32
	}{
		{name: "again", apply: []Approval{{Revision: "r", Step: 1, At: &at}, {Revision: "r", Step: 1, At: &later, Via: "status"}}, want: []int32{1}},
		{name: "next step", apply: []Approval{{Revision: "r", Step: 1, At: &at}, {Revision: "r", Step: 2, At: &at}}, want: []int32{1, 2}},
		{name: "another revision", apply: []Approval{{Revision: "r", Step: 1, At: &at}, {Revision: "s", Step: 1, At: &at}}, want: []int32{1, 1}},
		{name: "after a retry", apply: []Approval{{Revision: "r", Step: 1, At: &at}, {Action: ActionRetry, Revision: "r", At: &at}, {Revision: "r", Step: 1, At: &at}}, want: []int32{1, 0, 1}},
		{name: "an earlier release of the revision", since: later, apply: []Approval{{Revision: "r", Step: 1, At: &at}, {Revision: "r", Step: 1, At: &later}}, want: []int32{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := ""
			for _, a := range tt.apply {
				var err error
				if raw, err = Append(raw, a, tt.since); err != nil {
					t.Fatal(err)
				}
			}
			records, err := Records(raw)
			if err != nil {
				t.Fatal(err)
			}
			var got []int32
			for _, r := range records {
				got = append(got, r.Step)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("recorded steps %v, want %v", got, tt.want)
			}
			if tt.name == "again" && !records[0].At.Equal(at) {
				t.Fatalf("the first record was replaced: %+v", records[0])
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "step=2,revision=x", `{"step":3}`, "", "{", "step="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err == nil && a.Step < 1 {
			t.Fatalf("Parse(%q) accepted step %d", s, a.Step)
		}
		if err == nil {
			back, err := Parse(Encode(a))
			if err != nil || back.Step != a.Step || back.Revision != a.Revision {
				t.Fatalf("round trip of %+v: %+v, %v", a, back, err)
			}
		}
	})
}

func TestResolve(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := EncodeContext(Context{By: "alice", At: at, Revision: "r1"})
	tests := []struct {
		name, value, context string
		want                 Approval
		wantErr              bool
	}{
		{name: "pinned by context", value: "2", context: ctx, want: Approval{Step: 2, Revision: "r1", By: "alice"}},
		{name: "explicit revision wins", value: "step=2,revision=r2", context: ctx, want: Approval{Step: 2, Revision: "r2", By: "alice"}},
		{name: "no context, no revision", value: "2", want: Approval{Step: 2}},
		{name: "damaged context", value: "2", context: "{", want: Approval{Step: 2}},
		{name: "bad value", value: "x", context: ctx, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.value, tt.context)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Resolve() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (got.Step != tt.want.Step || got.Revision != tt.want.Revision || got.By != tt.want.By) {
				t.Fatalf("Resolve() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCommitRevision(t *testing.T) {
	for rev, want := range map[string]bool{
		"7778b69": true, "7778B69855AB": true, "0123456789abcdef0123456789abcdef01234567": true,
		"777c65c": true, "abc": false, "7778b6": false, "checkout-5d8f7c9b4": false, "": false, "zzzzzzz": false,
	} {
		if got := CommitRevision(rev); got != want {
			t.Errorf("CommitRevision(%q) = %v, want %v", rev, got, want)
		}
	}
}

// The approvers of a GitGate's quorum survive the annotation and the record
// of applied approvals.
func TestApprovers_recordedWithTheApproval(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := Approval{Revision: "abc123", Step: 2, By: "alice, bob", Via: "github-label+github-review", At: &at, PullRequest: 42,
		Approvers: []Approver{{By: "alice", Via: "github-label", At: &at, PullRequest: 42}, {By: "bob", Via: "github-review", At: &at, PullRequest: 42}}}
	parsed, err := Parse(Encode(a))
	if err != nil || len(parsed.Approvers) != 2 || parsed.Approvers[1].By != "bob" || parsed.Approvers[1].Via != "github-review" {
		t.Fatalf("parsed %+v, %v", parsed, err)
	}
	raw, err := Append("", parsed, at.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	records, err := Records(raw)
	if err != nil || len(records) != 1 || len(records[0].Approvers) != 2 || records[0].Approvers[0].PullRequest != 42 {
		t.Fatalf("records %+v, %v", records, err)
	}
}
