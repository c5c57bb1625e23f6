package lua

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// Limits bound one evaluation of a script.
type Limits struct {
	// Timeout is the wall-clock deadline of the evaluation.
	Timeout time.Duration
	// Instructions is how many VM instructions the script may run.
	Instructions int64
	// CallStack is how deep Lua calls may nest.
	CallStack int
	// Registry is how many values the state's stack may hold.
	Registry int
	// StringBytes is the longest string string.rep may build.
	StringBytes int
	// Result bounds the value the script returns.
	Result DecodeLimits
}

// DefaultLimits are the limits of scripts run by the provider: far above
// what a route script needs (a few thousand instructions), far below what
// could hurt the manager.
func DefaultLimits() Limits {
	return Limits{
		Timeout:      time.Second,
		Instructions: 1_000_000,
		CallStack:    200,
		Registry:     64 * 1024,
		StringBytes:  1 << 20,
		Result:       DefaultDecodeLimits(),
	}
}

// errBudget is how an evaluation that ran out of instructions ends.
var errBudget = errors.New("instruction budget exceeded")

// budget is a context whose Done is consulted by the Lua VM before every
// instruction: it counts them, and reports the context done once the
// budget is spent (or its parent is done).
type budget struct {
	context.Context
	left   atomic.Int64
	closed chan struct{}
}

func newBudget(parent context.Context, instructions int64) *budget {
	b := &budget{Context: parent, closed: make(chan struct{})}
	close(b.closed)
	b.left.Store(instructions)
	return b
}

// Done implements context.Context.
func (b *budget) Done() <-chan struct{} {
	if b.left.Add(-1) < 0 {
		return b.closed
	}
	return b.Context.Done()
}

// Err implements context.Context.
func (b *budget) Err() error {
	if b.left.Load() < 0 {
		return errBudget
	}
	return b.Context.Err()
}

// Run evaluates script, named name in messages, in a fresh sandboxed
// state with the global obj set to input (converted with ToLua), and
// returns the value it returns, decoded with Decode. Any failure is a
// *ScriptError carrying the script's or the sandbox's message.
func Run(ctx context.Context, name, script string, input map[string]any, limits Limits) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, limits.Timeout)
	defer cancel()
	L := glua.NewState(glua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       limits.CallStack,
		RegistrySize:        min(1024, limits.Registry),
		RegistryMaxSize:     limits.Registry,
		MinimizeStackMemory: true,
	})
	defer L.Close()
	if err := openSandbox(L, limits); err != nil {
		return nil, &ScriptError{Script: name, Message: err.Error()}
	}
	obj, err := ToLua(L, input)
	if err != nil {
		return nil, &ScriptError{Script: name, Message: "input: " + err.Error()}
	}
	L.SetGlobal("obj", obj)
	fn, err := L.Load(strings.NewReader(script), name)
	if err != nil {
		return nil, &ScriptError{Script: name, Message: messageOf(name, err)}
	}
	b := newBudget(ctx, limits.Instructions)
	L.SetContext(b)
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		if berr := b.Err(); berr != nil {
			return nil, &ScriptError{Script: name, Message: fmt.Sprintf("stopped after %s: %v", limits.Timeout, berr)}
		}
		return nil, &ScriptError{Script: name, Message: messageOf(name, err)}
	}
	out, err := Decode(L.Get(-1), limits.Result)
	if err != nil {
		return nil, &ScriptError{Script: name, Message: "result: " + err.Error()}
	}
	return out, nil
}

// messageOf is the script's message of a Lua error, without the Go stack
// and with "line N:" for Lua's "<name>:N:" prefix.
func messageOf(name string, err error) string {
	msg := err.Error()
	var apiErr *glua.ApiError
	if errors.As(err, &apiErr) && apiErr.Object != nil {
		msg = apiErr.Object.String()
	}
	if rest, ok := strings.CutPrefix(msg, name); ok {
		if after, ok := strings.CutPrefix(rest, ":"); ok {
			rest = "line " + after
		}
		msg = rest
	}
	return strings.TrimSpace(msg)
}

// removed are the functions of the base library a script may not call:
// they read files, load modules, print to the manager's output or drive
// the Go garbage collector.
var removed = []string{"dofile", "loadfile", "require", "module", "print", "_printregs", "collectgarbage"}

// openSandbox opens the base, table, string and math libraries in ls, less
// what a script must not reach, and bounds string.rep.
func openSandbox(ls *glua.LState, limits Limits) error {
	for _, lib := range []struct {
		name string
		open glua.LGFunction
	}{
		{glua.BaseLibName, glua.OpenBase},
		{glua.TabLibName, glua.OpenTable},
		{glua.StringLibName, glua.OpenString},
		{glua.MathLibName, glua.OpenMath},
	} {
		if err := ls.CallByParam(glua.P{Fn: ls.NewFunction(lib.open), NRet: 0, Protect: true}, glua.LString(lib.name)); err != nil {
			return err
		}
	}
	for _, name := range removed {
		ls.SetGlobal(name, glua.LNil)
	}
	if m, ok := ls.GetGlobal(glua.MathLibName).(*glua.LTable); ok {
		// Random numbers would make a script's routes differ between calls.
		m.RawSetString("random", glua.LNil)
		m.RawSetString("randomseed", glua.LNil)
	}
	str, ok := ls.GetGlobal(glua.StringLibName).(*glua.LTable)
	if !ok {
		return errors.New("string library missing")
	}
	maxBytes := limits.StringBytes
	str.RawSetString("rep", ls.NewFunction(func(ls *glua.LState) int {
		s, n := ls.CheckString(1), ls.CheckInt(2)
		if n <= 0 {
			ls.Push(glua.LString(""))
			return 1
		}
		if s != "" && n > maxBytes/len(s) {
			ls.RaiseError("string.rep: result longer than %d bytes", maxBytes)
		}
		ls.Push(glua.LString(strings.Repeat(s, n)))
		return 1
	}))
	return nil
}
