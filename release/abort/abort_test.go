package abort

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/release/approval"
)

func TestParse(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		value   string
		want    Request
		wantErr bool
		none    bool
	}{
		{name: "true pins later", value: "true", want: Request{}},
		{name: "a revision", value: " 7778b69855 ", want: Request{Revision: "7778b69855"}},
		{name: "JSON", value: `{"revision":"abc","by":"ops","via":"github-label","at":"2026-12-01T10:00:00Z","reason":"5xx","commit":"deadbeef","pullRequest":7}`,
			want: Request{Revision: "abc", By: "ops", Via: "github-label", At: &at, Reason: "5xx", Commit: "deadbeef", PullRequest: 7}},
		{name: "false asks for nothing", value: "False", none: true, wantErr: true},
		{name: "empty", value: " ", wantErr: true},
		{name: "broken JSON", value: `{"revision":`, wantErr: true},
		{name: "key=value is not a form", value: "revision=abc", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.value)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.none != errors.Is(err, ErrNone) {
				t.Fatalf("err = %v, want ErrNone %v", err, tt.none)
			}
			if err == nil && Encode(got) != Encode(tt.want) {
				t.Fatalf("got %s, want %s", Encode(got), Encode(tt.want))
			}
		})
	}
}

func TestResolve_contextPinsRevisionAndStampsWho(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ctx := approval.EncodeContext(approval.Context{By: "alice", At: at, Revision: "v2"})
	tests := []struct {
		name, value, context string
		want                 Request
	}{
		{"true takes the revision and who from the context", "true", ctx, Request{Revision: "v2", By: "alice", At: &at}},
		{"a named revision stays", "v9", ctx, Request{Revision: "v9", By: "alice", At: &at}},
		{"the context's who wins over the value's", `{"revision":"v2","by":"mallory","via":"github-label"}`, ctx,
			Request{Revision: "v2", By: "alice", Via: "github-label", At: &at}},
		{"no context: the value as written", "true", "", Request{}},
		{"a damaged context loses who and when", "v2", "{", Request{Revision: "v2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.value, tt.context)
			if err != nil {
				t.Fatal(err)
			}
			if Encode(got) != Encode(tt.want) {
				t.Fatalf("got %s, want %s", Encode(got), Encode(tt.want))
			}
		})
	}
}

func TestNewerThan(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 500, time.UTC)
	r := Request{At: &at}
	if !r.NewerThan(at.Add(-time.Microsecond)) {
		t.Error("a request after t is newer")
	}
	if r.NewerThan(at) {
		t.Error("a request at t is not newer")
	}
	if (Request{}).NewerThan(time.Time{}) {
		t.Error("a request without a time is never newer")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"true", "false", "abc", `{"revision":"x","pullRequest":3}`, "{", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		if _, err := Parse(Encode(r)); err != nil {
			t.Fatalf("Encode(%+v) does not parse: %v", r, err)
		}
	})
}

func TestPatch_writesTheEncodedRequestIntoTheAnnotation(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	req := Request{Revision: "abc", By: "jane", Via: "kubectl-sluice", At: &at}
	b, err := json.Marshal(Patch("sluice.dev/abort", req))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Metadata.Annotations) != 1 || got.Metadata.Annotations["sluice.dev/abort"] != Encode(req) {
		t.Errorf("patch %s, want only sluice.dev/abort set to %s", b, Encode(req))
	}
}
