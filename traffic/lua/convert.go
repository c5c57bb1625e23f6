package lua

import (
	"fmt"
	"math"
	"sort"
	"unicode/utf8"

	glua "github.com/yuin/gopher-lua"
)

// DecodeLimits bound a value decoded from Lua.
type DecodeLimits struct {
	// Depth is how deeply tables may nest (this also stops cycles).
	Depth int
	// Nodes is how many values (tables, strings, numbers, booleans) the
	// value may hold in all.
	Nodes int
	// Bytes is how many bytes its strings and keys may hold in all.
	Bytes int
}

// DefaultDecodeLimits allow a value far bigger than any route object.
func DefaultDecodeLimits() DecodeLimits {
	return DecodeLimits{Depth: 64, Nodes: 100_000, Bytes: 1 << 20}
}

// maxExactInteger is the largest integer a float64 holds exactly.
const maxExactInteger = 1 << 53

// Decode turns a Lua value into its JSON form: a table whose keys are
// 1..n is a []any, any other table a map[string]any (an empty table is an
// empty map), numbers are int64 when integral and float64 otherwise.
// It is strict: keys that are neither all strings nor 1..n, non-finite
// numbers, strings that are not UTF-8, functions and other Lua values,
// and values beyond limits are errors.
func Decode(v glua.LValue, limits DecodeLimits) (any, error) {
	d := &decoder{limits: limits}
	return d.value(v, 0, "result")
}

type decoder struct {
	limits       DecodeLimits
	nodes, bytes int
}

func (d *decoder) count(bytes int) error {
	d.nodes++
	d.bytes += bytes
	if d.nodes > d.limits.Nodes {
		return fmt.Errorf("more than %d values", d.limits.Nodes)
	}
	if d.bytes > d.limits.Bytes {
		return fmt.Errorf("more than %d bytes of strings", d.limits.Bytes)
	}
	return nil
}

func (d *decoder) value(v glua.LValue, depth int, path string) (any, error) {
	switch v := v.(type) {
	case glua.LBool:
		return bool(v), d.count(0)
	case glua.LString:
		if !utf8.ValidString(string(v)) {
			return nil, fmt.Errorf("%s: string is not UTF-8", path)
		}
		return string(v), d.count(len(v))
	case glua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s: number %v has no JSON form", path, f)
		}
		if err := d.count(0); err != nil {
			return nil, err
		}
		if f == math.Trunc(f) && math.Abs(f) <= maxExactInteger {
			return int64(f), nil
		}
		return f, nil
	case *glua.LTable:
		if depth >= d.limits.Depth {
			return nil, fmt.Errorf("%s: tables nest deeper than %d", path, d.limits.Depth)
		}
		if err := d.count(0); err != nil {
			return nil, err
		}
		return d.table(v, depth+1, path)
	case *glua.LNilType, nil:
		return nil, fmt.Errorf("%s: nothing", path)
	}
	return nil, fmt.Errorf("%s: a %s has no JSON form", path, v.Type())
}

func (d *decoder) table(t *glua.LTable, depth int, path string) (any, error) {
	var strKeys []string
	var numKeys []float64
	var bad error
	t.ForEach(func(k, _ glua.LValue) {
		switch k := k.(type) {
		case glua.LString:
			strKeys = append(strKeys, string(k))
		case glua.LNumber:
			numKeys = append(numKeys, float64(k))
		default:
			bad = fmt.Errorf("%s: a %s key has no JSON form", path, k.Type())
		}
	})
	switch {
	case bad != nil:
		return nil, bad
	case len(strKeys) > 0 && len(numKeys) > 0:
		return nil, fmt.Errorf("%s: table mixes string and number keys", path)
	case len(numKeys) > 0:
		sort.Float64s(numKeys)
		for i, k := range numKeys {
			if k != float64(i+1) {
				return nil, fmt.Errorf("%s: a list must have the keys 1..%d, not %v", path, len(numKeys), k)
			}
		}
		out := make([]any, len(numKeys))
		for i := range out {
			v, err := d.value(t.RawGetInt(i+1), depth, fmt.Sprintf("%s[%d]", path, i+1))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	sort.Strings(strKeys)
	out := make(map[string]any, len(strKeys))
	for _, k := range strKeys {
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("%s: key is not UTF-8", path)
		}
		if err := d.count(len(k)); err != nil {
			return nil, err
		}
		v, err := d.value(t.RawGetString(k), depth, path+"."+k)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// ToLua turns a value of JSON form (maps, slices, strings, numbers,
// booleans, nil; as encoding/json or an unstructured object holds them)
// into a Lua value of the state ls. nil becomes Lua's nil: a nil in a list
// leaves a hole, a nil in a map drops the key.
func ToLua(ls *glua.LState, v any) (glua.LValue, error) {
	switch v := v.(type) {
	case nil:
		return glua.LNil, nil
	case bool:
		return glua.LBool(v), nil
	case string:
		return glua.LString(v), nil
	case int:
		return glua.LNumber(v), nil
	case int32:
		return glua.LNumber(v), nil
	case int64:
		return glua.LNumber(v), nil
	case float64:
		return glua.LNumber(v), nil
	case map[string]string:
		t := ls.CreateTable(0, len(v))
		for k, s := range v {
			t.RawSetString(k, glua.LString(s))
		}
		return t, nil
	case map[string]any:
		t := ls.CreateTable(0, len(v))
		for k, e := range v {
			lv, err := ToLua(ls, e)
			if err != nil {
				return nil, err
			}
			t.RawSetString(k, lv)
		}
		return t, nil
	case []any:
		t := ls.CreateTable(len(v), 0)
		for i, e := range v {
			lv, err := ToLua(ls, e)
			if err != nil {
				return nil, err
			}
			t.RawSetInt(i+1, lv)
		}
		return t, nil
	}
	return nil, fmt.Errorf("a %T has no Lua form", v)
}
