package handback

import (
	"encoding/json"
	"testing"
)

func fromJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// The rules of an HTTPRoute before a release, as sluice writes them at a
// 20% step with a header match, and variations of them.
const (
	stableRule = `{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"group":"","kind":"Service","name":"web","port":80,"weight":1}]}`
	matchRule  = `{"matches":[{"path":{"type":"PathPrefix","value":"/"},"headers":[{"type":"Exact","name":"x-user","value":"beta"}]}],"backendRefs":[{"group":"","kind":"Service","name":"web-canary","port":80,"weight":1}]}`
	weighRule  = `{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"group":"","kind":"Service","name":"web","port":80,"weight":80},{"group":"","kind":"Service","name":"web-canary","port":80,"weight":20}]}`
	apiRule    = `{"matches":[{"path":{"type":"PathPrefix","value":"/api"}}],"backendRefs":[{"group":"","kind":"Service","name":"api","port":8080,"weight":1}]}`
	timedRule  = `{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"timeouts":{"request":"10s"},"backendRefs":[{"group":"","kind":"Service","name":"web","port":80,"weight":80},{"group":"","kind":"Service","name":"web-canary","port":80,"weight":20}]}`
	timedBack  = `{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"timeouts":{"request":"10s"},"backendRefs":[{"group":"","kind":"Service","name":"web","port":80,"weight":1}]}`
)

func TestRevert(t *testing.T) {
	tests := []struct {
		name                    string
		live, original, applied string
		want                    string
	}{
		{"untouched since: the original comes back",
			`[` + matchRule + `,` + weighRule + `]`, `[` + stableRule + `]`, `[` + matchRule + `,` + weighRule + `]`,
			`[` + stableRule + `]`},
		{"a rule added by someone else is kept",
			`[` + matchRule + `,` + weighRule + `,` + apiRule + `]`, `[` + stableRule + `]`, `[` + matchRule + `,` + weighRule + `]`,
			`[` + stableRule + `,` + apiRule + `]`},
		{"a rule added in front is kept",
			`[` + apiRule + `,` + matchRule + `,` + weighRule + `]`, `[` + stableRule + `]`, `[` + matchRule + `,` + weighRule + `]`,
			`[` + apiRule + `,` + stableRule + `]`},
		{"an edit of the rule sluice weighs is kept, the weights go back",
			`[` + matchRule + `,` + timedRule + `]`, `[` + stableRule + `]`, `[` + matchRule + `,` + weighRule + `]`,
			`[` + timedBack + `]`},
		{"rules rewritten by a GitOps tool are kept as written",
			`[` + stableRule + `,` + apiRule + `]`, `[` + stableRule + `]`, `[` + matchRule + `,` + weighRule + `]`,
			`[` + stableRule + `,` + apiRule + `]`},
		{"a rule removed by someone else stays removed",
			`[` + matchRule + `,` + weighRule + `]`, `[` + stableRule + `,` + apiRule + `]`, `[` + matchRule + `,` + weighRule + `,` + apiRule + `]`,
			`[` + stableRule + `]`},
		{"selector: sluice's key goes, someone else's stays",
			`{"app":"web","pod-template-hash":"abc","tier":"front"}`, `{"app":"web"}`, `{"app":"web","pod-template-hash":"abc"}`,
			`{"app":"web","tier":"front"}`},
		{"selector: a key sluice changed and someone changed again keeps their value",
			`{"app":"shop","pod-template-hash":"abc"}`, `{"app":"web"}`, `{"app":"web","pod-template-hash":"abc"}`,
			`{"app":"shop"}`},
		{"spec: a key sluice removed comes back",
			`{"b":2,"c":3}`, `{"a":1,"b":1}`, `{"b":2}`,
			`{"a":1,"b":1,"c":3}`},
		{"spec: a key someone removed stays removed",
			`{"c":3}`, `{"a":1,"b":1}`, `{"a":1,"b":2}`,
			`{"c":3}`},
		{"unset before: unset again",
			`{"x":1}`, `null`, `{"x":1}`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Revert(fromJSON(t, tt.live), fromJSON(t, tt.original), fromJSON(t, tt.applied))
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(fromJSON(t, tt.want))
			if string(gb) != string(wb) {
				t.Fatalf("Revert =\n%s\nwant\n%s", gb, wb)
			}
		})
	}
}

func TestRecord_base(t *testing.T) {
	r, err := New("web", map[string]string{"app": "web"}, nil, "spec", "selector")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.Base(map[string]string{"app": "x"}); err != nil || b.(map[string]any)["app"] != "web" {
		t.Fatalf("without applied: Base = %v, %v; want the original", b, err)
	}
	if err := r.SetApplied(map[string]string{"app": "web", "h": "1"}); err != nil {
		t.Fatal(err)
	}
	back, err := Read(map[string]string{"k": r.Encode()}, "k")
	if err != nil {
		t.Fatal(err)
	}
	b, err := back.Base(map[string]string{"app": "web", "h": "1", "tier": "front"})
	if err != nil {
		t.Fatal(err)
	}
	if gb, _ := json.Marshal(b); string(gb) != `{"app":"web","tier":"front"}` {
		t.Fatalf("Base = %s", gb)
	}
}
