package approval

import (
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
		raw, err = Append(raw, Approval{Revision: "r", Step: int32(i + 1), At: &at})
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
