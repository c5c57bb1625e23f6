package health

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// status is the health Argo CD reads from a script's return value.
type status struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// The statuses Argo CD accepts; any other becomes Unknown.
var validStatuses = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// runHealth evaluates a health script as Argo CD does for a script from argocd-cm: no
// standard libraries but package, base and table, a one-second deadline, the object as the
// global obj, and the returned table decoded as {status, message}.
func runHealth(script string, obj map[string]any) (status, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return status{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return status{}, err
	}
	ret := l.Get(-1)
	t, ok := ret.(*lua.LTable)
	if !ok {
		return status{}, fmt.Errorf("expect table output from Lua script, not %s", ret.Type())
	}
	raw, err := json.Marshal(fromLua(t))
	if err != nil {
		return status{}, err
	}
	var hs status
	if err := json.Unmarshal(raw, &hs); err != nil {
		return status{}, err
	}
	if !validStatuses[hs.Status] {
		return status{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	}
	return hs, nil
}

// toLua converts a decoded JSON/YAML value into Lua values: objects and arrays become
// tables (arrays from index 1), numbers LNumber.
func toLua(l *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := l.CreateTable(len(x), 0)
		for _, item := range x {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(x))
		for k, item := range x {
			t.RawSetH(lua.LString(k), toLua(l, item))
		}
		return t
	}
	return lua.LNil
}

// fromLua converts a returned table into Go values for JSON encoding.
func fromLua(v lua.LValue) any {
	switch x := v.(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return float64(x)
	case lua.LBool:
		return bool(x)
	case *lua.LTable:
		m := map[string]any{}
		x.ForEach(func(k, item lua.LValue) { m[k.String()] = fromLua(item) })
		return m
	}
	return nil
}
