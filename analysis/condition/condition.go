// Package condition compiles and evaluates the success and failure
// conditions of a MetricGate's metrics: CEL expressions over one variable,
// result, the value a measurement produced (a number, a string, a bool, a
// list or a map, as decoded from JSON or PromQL).
//
// The environment is deliberately small: CEL's standard library (with
// numbers of different types comparable, so "result < 5" works on a
// double), no other variables, no functions with side effects. Every
// evaluation is bounded by a cost limit and by its context, so a condition
// can neither loop nor stall the controller. A Compiler compiles each
// expression once and keeps the program.
package condition

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// MaxLength is the longest expression accepted, as the CRD allows.
const MaxLength = 1024

// costLimit bounds one evaluation. A comparison costs about 1; walking a
// list of n elements about n. 10^5 leaves room for any honest condition
// over a result of a few thousand values, and stops a quadratic one over a
// large result.
const costLimit = 100_000

// maxCached bounds the compiled programs kept; past it the cache starts
// over (expressions come from MetricGates: a handful per cluster).
const maxCached = 1024

// Var is the name of the variable a condition reads.
const Var = "result"

// Compiler compiles conditions once and evaluates them.
type Compiler struct {
	env *cel.Env

	mu    sync.Mutex
	cache map[string]*Program
}

// Program is a compiled condition.
type Program struct {
	expr string
	prg  cel.Program
}

// New returns a Compiler with the conditions' environment.
func New() (*Compiler, error) {
	env, err := cel.NewEnv(
		cel.Variable(Var, cel.DynType),
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(MaxLength),
		cel.ParserRecursionLimit(50),
	)
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	return &Compiler{env: env, cache: map[string]*Program{}}, nil
}

// Compile compiles expr, or returns the program compiled before. The error
// says where the expression is wrong; callers prefix the field.
func (c *Compiler) Compile(expr string) (*Program, error) {
	c.mu.Lock()
	p, ok := c.cache[expr]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	if expr == "" {
		return nil, errors.New("empty expression")
	}
	if len(expr) > MaxLength {
		return nil, fmt.Errorf("expression is %d characters long, more than %d", len(expr), MaxLength)
	}
	ast, iss := c.env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("invalid CEL expression: %w", iss.Err())
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, fmt.Errorf("expression gives a %s, not a bool", t)
	}
	prg, err := c.env.Program(ast,
		cel.CostLimit(costLimit),
		cel.InterruptCheckFrequency(100),
	)
	if err != nil {
		return nil, fmt.Errorf("invalid CEL expression: %w", err)
	}
	p = &Program{expr: expr, prg: prg}
	c.mu.Lock()
	if len(c.cache) >= maxCached {
		c.cache = map[string]*Program{}
	}
	c.cache[expr] = p
	c.mu.Unlock()
	return p, nil
}

// String is the expression compiled.
func (p *Program) String() string { return p.expr }

// Eval evaluates the condition with result bound to value (nil, bool,
// float64, int64, string, []any or map[string]any, as JSON decodes). The
// condition must give a bool.
func (p *Program) Eval(ctx context.Context, value any) (bool, error) {
	out, _, err := p.prg.ContextEval(ctx, map[string]any{Var: value})
	if err != nil {
		return false, fmt.Errorf("evaluating %q: %w", p.expr, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("evaluating %q: gives %s, not a bool", p.expr, out.Type().TypeName())
	}
	return b, nil
}
