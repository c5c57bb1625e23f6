package web

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSelect(t *testing.T) {
	doc := `{"data": {"errorRate": 0.004, "ok": true, "name": "v2", "series": [{"v": 1}, {"v": 2}]}}`
	tests := []struct {
		name    string
		path    string
		want    any
		wantErr string
	}{
		{name: "number", path: "{.data.errorRate}", want: 0.004},
		{name: "without braces", path: ".data.errorRate", want: 0.004},
		{name: "bool", path: "{.data.ok}", want: true},
		{name: "string", path: "{.data.name}", want: "v2"},
		{name: "several values give a list", path: "{.data.series[*].v}", want: []any{1.0, 2.0}},
		{name: "one list element", path: "{.data.series[1].v}", want: 2.0},
		{name: "a map", path: "{.data.series[0]}", want: map[string]any{"v": 1.0}},
		{name: "filter", path: "{.data.series[?(@.v > 1.0)].v}", want: 2.0},
		{name: "whole document", path: "", want: map[string]any{"data": map[string]any{"errorRate": 0.004, "ok": true, "name": "v2",
			"series": []any{map[string]any{"v": 1.0}, map[string]any{"v": 2.0}}}}},
		{name: "missing key", path: "{.data.latency}", wantErr: "latency is not found"},
		{name: "syntax error", path: "{.data[}", wantErr: "unterminated array"},
	}
	var d any
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.path)
			var got any
			if err == nil {
				got, err = Select(p, d)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// FuzzSelect: a JSONPath from the spec and an answer from the endpoint,
// both outside input, never make Select panic.
func FuzzSelect(f *testing.F) {
	f.Add("{.data.errorRate}", `{"data": {"errorRate": 0.1}}`)
	f.Add("{.items[*].v}", `{"items": [{"v": 1}, {"v": 2}]}`)
	f.Add("{.a[?(@.b > 1.0)]}", `{"a": [{"b": 2}]}`)
	f.Add("", `[1, "x", null]`)
	f.Fuzz(func(_ *testing.T, path, body string) {
		p, err := Compile(path)
		if err != nil {
			return
		}
		var doc any
		if json.Unmarshal([]byte(body), &doc) != nil {
			return
		}
		_, _ = Select(p, doc)
	})
}
