package lua

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRun_sandbox(t *testing.T) {
	limits := DefaultLimits()
	limits.Timeout = 5 * time.Second
	tests := []struct {
		name    string
		script  string
		limits  func(*Limits)
		wantErr string
	}{
		{name: "os is not there", script: `os.exit(1)`, wantErr: "attempt to index a non-table object(nil)"},
		{name: "io is not there", script: `return io.open("/etc/passwd")`, wantErr: "attempt to index a non-table object(nil)"},
		{name: "dofile is not there", script: `dofile("/etc/passwd")`, wantErr: "attempt to call a non-function object"},
		{name: "loadfile is not there", script: `loadfile("/etc/passwd")`, wantErr: "attempt to call a non-function object"},
		{name: "require is not there", script: `require("os")`, wantErr: "attempt to call a non-function object"},
		{name: "print is not there", script: `print("x")`, wantErr: "attempt to call a non-function object"},
		{name: "package is not there", script: `return package.loaded`, wantErr: "attempt to index a non-table object(nil)"},
		{name: "coroutines are not there", script: `coroutine.create(function() end)`, wantErr: "attempt to index a non-table object(nil)"},
		{name: "math.random is not there", script: `return math.random()`, wantErr: "attempt to call a non-function object"},
		{name: "an endless loop runs out of instructions", script: `while true do end`, wantErr: "instruction budget exceeded"},
		{
			name: "an endless loop is stopped by the deadline", script: `while true do end`,
			limits:  func(l *Limits) { l.Instructions = 1 << 62; l.Timeout = 50 * time.Millisecond },
			wantErr: "context deadline exceeded",
		},
		{name: "building a huge table runs out of instructions", script: `local t = {} for i = 1, 1e9 do t[i] = i end`, wantErr: "instruction budget exceeded"},
		{name: "endless recursion overflows the call stack", script: `local function f() return 1 + f() end return f()`, wantErr: "stack overflow"},
		{name: "string.rep is bounded", script: `return string.rep("x", 1e9)`, wantErr: "string.rep: result longer than"},
		{
			name:    "a huge table is rejected",
			script:  `local t = {} for i = 1, 200000 do t[i] = i end return {spec = {items = t}}`,
			wantErr: "result: more than 100000 values",
		},
		{
			name:    "a huge string is rejected",
			script:  `return {spec = {a = string.rep("x", 1000000), b = string.rep("y", 100000)}}`,
			wantErr: "result: more than 1048576 bytes of strings",
		},
		{
			name:    "a cycle is rejected",
			script:  `local t = {} t.self = t return {spec = t}`,
			wantErr: "tables nest deeper than 64",
		},
		{name: "an error carries the script's message", script: `error("no route to " .. obj.stableService)`, wantErr: "Lua script test.lua: line 1: no route to reviews"},
		{name: "a syntax error is reported", script: `return {`, wantErr: "syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := limits
			if tt.limits != nil {
				tt.limits(&l)
			}
			_, err := Run(context.Background(), "test.lua", tt.script, map[string]any{"stableService": "reviews"}, l)
			var serr *ScriptError
			if !errors.As(err, &serr) {
				t.Fatalf("err = %v, want a ScriptError", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %q, want it to contain %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "Lua script test.lua: ") {
				t.Fatalf("err = %q, want it to name the script", err)
			}
		})
	}
}

func TestRun_returnsTheScriptsValue(t *testing.T) {
	got, err := Run(context.Background(), "test.lua", `
local out = {}
for k, v in pairs(obj) do out[k] = v end
out.n = #obj.list + string.len(obj.s) + math.floor(2.5)
out.joined = table.concat(obj.list, ",")
return out`, map[string]any{"list": []any{"a", "b"}, "s": "xyz", "f": 1.5, "b": true}, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"list": []any{"a", "b"}, "s": "xyz", "f": 1.5, "b": true, "n": int64(7), "joined": "a,b"}
	if same, _ := sameJSON(got, want); !same {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

func TestRun_freshStatePerEvaluation(t *testing.T) {
	script := `if leaked ~= nil then error("state leaked from an earlier run") end leaked = true return {spec = {}}`
	for range 2 {
		if _, err := Run(context.Background(), "test.lua", script, nil, DefaultLimits()); err != nil {
			t.Fatal(err)
		}
	}
}
