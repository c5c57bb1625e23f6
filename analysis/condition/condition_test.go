package condition

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCompileEval(t *testing.T) {
	tests := []struct {
		name    string
		expr    string
		value   any
		want    bool
		wantErr string // at compile or evaluation
	}{
		{name: "double below an int literal", expr: "result < 5", value: 0.4, want: true},
		{name: "double above a double literal", expr: "result < 0.05", value: 0.12, want: false},
		{name: "double equals an int", expr: "result == 1", value: 1.0, want: true},
		{name: "int64 against a double", expr: "result >= 0.5", value: int64(1), want: true},
		{name: "NaN is an error, not a verdict", expr: "result < 1", value: math.NaN(), wantErr: "NaN values cannot be ordered"},
		{name: "bool", expr: "result", value: true, want: true},
		{name: "string", expr: "result == 'ok'", value: "ok", want: true},
		{name: "string function", expr: "result.startsWith('o')", value: "ok", want: true},
		{name: "list all", expr: "result.all(x, x < 0.05)", value: []any{0.01, 0.02}, want: true},
		{name: "list exists", expr: "result.exists(x, x > 0.05)", value: []any{0.01, 0.2}, want: true},
		{name: "list size", expr: "size(result) == 0", value: []any{}, want: true},
		{name: "list index", expr: "result[0] < 1", value: []any{0.5}, want: true},
		{name: "map field", expr: "result.ok && result.rate < 0.1", value: map[string]any{"ok": true, "rate": 0.01}, want: true},
		{name: "map has", expr: "has(result.rate)", value: map[string]any{"ok": true}, want: false},
		{name: "null", expr: "result == null", value: nil, want: true},
		{name: "syntax error", expr: "result <", wantErr: "invalid CEL expression"},
		{name: "unknown variable", expr: "value < 1", wantErr: "undeclared reference to 'value'"},
		{name: "unknown function", expr: "exec('rm') == 1", wantErr: "undeclared reference to 'exec'"},
		{name: "not a bool at compile", expr: "1 + 2", wantErr: "not a bool"},
		{name: "not a bool at evaluation", expr: "result", value: 0.3, wantErr: "not a bool"},
		{name: "type mismatch at evaluation", expr: "result < 1", value: "high", wantErr: "no such overload"},
		{name: "missing map key", expr: "result.rate < 1", value: map[string]any{}, wantErr: "no such key"},
		{name: "empty", expr: "", wantErr: "empty expression"},
		{name: "too long", expr: strings.Repeat("1 == 1 && ", 200) + "true", wantErr: "more than 1024"},
	}
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := c.Compile(tt.expr)
			var got bool
			if err == nil {
				got, err = p.Eval(context.Background(), tt.value)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			if got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompile_compilesOnce(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Compile("result < 1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Compile("result < 1")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the second Compile of the same expression compiled it again")
	}
}

// A condition that would do too much work over a large result stops at the
// cost limit instead of holding the controller.
func TestEval_costLimitStopsExpensiveConditions(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Compile("result.all(x, result.all(y, x <= y || x > y))")
	if err != nil {
		t.Fatal(err)
	}
	big := make([]any, 2000)
	for i := range big {
		big[i] = float64(i)
	}
	start := time.Now()
	_, err = p.Eval(context.Background(), big)
	if err == nil || !strings.Contains(err.Error(), "cost limit") {
		t.Fatalf("error = %v, want the cost limit exceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s to stop", d)
	}
}

func TestEval_stopsWhenTheContextIsDone(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Compile("result.all(x, x >= 0)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := make([]any, 10000)
	for i := range big {
		big[i] = 1.0
	}
	if _, err := p.Eval(ctx, big); err == nil {
		t.Fatal("evaluation with a cancelled context succeeded")
	}
}

// FuzzCompileEval feeds arbitrary expressions and JSON results: compiling
// and evaluating never panics, and an evaluation either gives a bool or an
// error.
func FuzzCompileEval(f *testing.F) {
	for _, s := range []struct{ expr, value string }{
		{"result < 0.05", "0.01"},
		{"result.all(x, x < 1)", "[0.1, 2]"},
		{"result.ok == true", `{"ok": true}`},
		{"size(result) > 0 && result[0] == 'a'", `["a"]`},
		{"result", "true"},
		{"result == null", "null"},
		{"has(result.a.b)", `{"a": {}}`},
		{"result.map(x, x * 2).exists(y, y > 3)", "[1, 2]"},
		{"'a' + result", `"b"`},
		{"result / 0.0 > 1.0", "1"},
	} {
		f.Add(s.expr, s.value)
	}
	c, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(_ *testing.T, expr, value string) {
		p, err := c.Compile(expr)
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal([]byte(value), &v) != nil {
			v = value
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = p.Eval(ctx, v)
	})
}
