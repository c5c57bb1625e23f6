package lua

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	glua "github.com/yuin/gopher-lua"
)

// decodeScript runs script in a bare state and decodes what it returns.
func decodeScript(t testing.TB, script string, limits DecodeLimits) (any, error) {
	t.Helper()
	L := glua.NewState()
	defer L.Close()
	if err := L.DoString(script); err != nil {
		t.Fatalf("running %q: %v", script, err)
	}
	return Decode(L.Get(-1), limits)
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		want    any
		wantErr string
	}{
		{name: "a map", script: `return {a = 1, b = "x", c = true}`, want: map[string]any{"a": int64(1), "b": "x", "c": true}},
		{name: "a list", script: `return {"a", "b", {c = 1.5}}`, want: []any{"a", "b", map[string]any{"c": 1.5}}},
		{name: "an empty table is a map", script: `return {}`, want: map[string]any{}},
		{name: "integral numbers are integers", script: `return {n = 3.0, m = -7, big = 2^53}`, want: map[string]any{"n": int64(3), "m": int64(-7), "big": int64(1 << 53)}},
		{name: "numbers beyond 2^53 stay floats", script: `return 2^60`, want: float64(1 << 60)},
		{name: "a string", script: `return "s"`, want: "s"},
		{name: "nothing", script: `return nil`, wantErr: "result: nothing"},
		{name: "a function", script: `return function() end`, wantErr: "a function has no JSON form"},
		{name: "not a number", script: `return {x = 0/0}`, wantErr: "result.x: number NaN has no JSON form"},
		{name: "infinity", script: `return {1/0}`, wantErr: "has no JSON form"},
		{name: "mixed keys", script: `return {1, a = 2}`, wantErr: "mixes string and number keys"},
		{name: "a list with a hole", script: `return {[1] = "a", [3] = "c"}`, wantErr: "a list must have the keys 1..2, not 3"},
		{name: "fractional keys", script: `return {[1.5] = "a"}`, wantErr: "a list must have the keys 1..1, not 1.5"},
		{name: "table keys", script: `return {[{}] = 1}`, wantErr: "a table key has no JSON form"},
		{name: "boolean keys", script: `return {[true] = 1}`, wantErr: "a boolean key has no JSON form"},
		{name: "strings that are not UTF-8", script: `return {s = "\255"}`, wantErr: "result.s: string is not UTF-8"},
		{name: "keys that are not UTF-8", script: `return {["\255"] = 1}`, wantErr: "key is not UTF-8"},
		{name: "the path of an error", script: `return {spec = {http = {{route = function() end}}}}`, wantErr: "result.spec.http[1].route: a function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeScript(t, tt.script, DefaultDecodeLimits())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(tt.want)
			if string(gb) != string(wb) {
				t.Fatalf("got %s, want %s", gb, wb)
			}
			if _, ok := got.(int64); !ok {
				if _, ok := tt.want.(int64); ok {
					t.Fatalf("got %T, want an int64", got)
				}
			}
		})
	}
}

func TestResultOf(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		wantErr string
	}{
		{name: "spec only", in: map[string]any{"spec": map[string]any{"a": int64(1)}}},
		{name: "spec, labels and annotations", in: map[string]any{"spec": map[string]any{}, "labels": map[string]any{"a": "b"}, "annotations": map[string]any{}}},
		{name: "a list", in: []any{"a"}, wantErr: "the script returned a list, not a table with a spec"},
		{name: "a string", in: "x", wantErr: "the script returned a string"},
		{name: "no spec", in: map[string]any{"labels": map[string]any{}}, wantErr: "the result has no spec"},
		{name: "a spec that is a list", in: map[string]any{"spec": []any{int64(1)}}, wantErr: "spec is a list"},
		{name: "labels that are not strings", in: map[string]any{"spec": map[string]any{}, "labels": map[string]any{"a": int64(1)}}, wantErr: "labels: a is a number, not a string"},
		{name: "unknown keys", in: map[string]any{"spec": map[string]any{}, "status": map[string]any{}}, wantErr: `unknown key "status"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ResultOf(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzDecode runs arbitrary scripts in the sandbox and decodes what they
// return: decoding never panics, and what it accepts is within its limits,
// has a JSON form, and decodes to itself again once turned back into Lua.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`return {spec = {http = {{route = {{destination = {host = "a"}, weight = 10}}}}}}`,
		`return {1, 2, {a = "b"}, 2.5, true}`,
		`return {[1] = 1, [3] = 3}`,
		`return {x = 0/0}`,
		`local t = {} t.t = t return t`,
		`return {["\255"] = "x"}`,
		`return {}`,
		`return 2^63`,
		`return function() end`,
		`local t = {} for i = 1, 2000 do t[i] = {i} end return t`,
		`return obj`,
	} {
		f.Add(seed)
	}
	limits := DefaultLimits()
	limits.Timeout = 200 * time.Millisecond
	limits.Instructions = 100_000
	limits.Result = DecodeLimits{Depth: 16, Nodes: 1000, Bytes: 4096}
	input := map[string]any{"data": map[string]any{"spec": map[string]any{"a": []any{int64(1), "x"}}}, "canaryWeight": int64(5)}
	f.Fuzz(func(t *testing.T, script string) {
		got, err := Run(context.Background(), "fuzz.lua", script, input, limits)
		if err != nil {
			var serr *ScriptError
			if !errors.As(err, &serr) {
				t.Fatalf("err = %v, not a ScriptError", err)
			}
			return
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("decoded %#v has no JSON form: %v", got, err)
		}
		if !utf8.Valid(b) {
			t.Fatalf("JSON of %#v is not UTF-8", got)
		}
		L := glua.NewState()
		defer L.Close()
		lv, err := ToLua(L, got)
		if err != nil {
			t.Fatalf("ToLua(%#v): %v", got, err)
		}
		again, err := Decode(lv, limits.Result)
		if err != nil {
			t.Fatalf("decoding %s again: %v", b, err)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Fatalf("decoded %s, then %s", b, b2)
		}
	})
}
