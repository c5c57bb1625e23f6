package handback

import (
	"encoding/json"
	"reflect"
)

// Revert undoes sluice's change of a value and nothing else. original is
// the value before sluice changed it, applied what sluice wrote, live what
// the object holds now; all three are in their JSON form (maps, lists,
// strings, float64, bool, nil; see JSONForm). Where live still holds
// what sluice wrote, the original comes back; whatever someone else
// changed since (a key added or removed, an element of a list edited,
// added or removed, a scalar set) is kept. So a restore never drops an
// edit made while the release ran.
//
// Maps are merged key by key. Lists are merged element by element: the
// elements of applied are paired with those of original (sluice changes
// elements in place and inserts new ones, e.g. a canary rule before the
// rule it copies), and those of live with those of applied, equal
// elements first, then in order by likeness. An element sluice inserted
// is dropped; one it changed is reverted recursively; one with no
// counterpart in what sluice wrote was added by someone else and is kept.
func Revert(live, original, applied any) any {
	if reflect.DeepEqual(live, applied) {
		return original
	}
	switch l := live.(type) {
	case map[string]any:
		o, ok1 := original.(map[string]any)
		a, ok2 := applied.(map[string]any)
		if !ok1 || !ok2 {
			return live
		}
		return revertMap(l, o, a)
	case []any:
		o, ok1 := original.([]any)
		a, ok2 := applied.([]any)
		if !ok1 || !ok2 {
			return live
		}
		return revertList(l, o, a)
	}
	return live
}

func revertMap(live, original, applied map[string]any) map[string]any {
	out := make(map[string]any, len(live))
	for k, l := range live {
		a, inApplied := applied[k]
		o, inOriginal := original[k]
		switch {
		case !inApplied:
			out[k] = l // someone else's key
		case !inOriginal:
			// sluice added the key: drop it unless someone changed it since,
			// then keep what they wrote without what sluice added inside.
			if !reflect.DeepEqual(l, a) {
				out[k] = Revert(l, emptyLike(a), a)
			}
		default:
			out[k] = Revert(l, o, a)
		}
	}
	for k, o := range original {
		_, inApplied := applied[k]
		_, inLive := live[k]
		if !inApplied && !inLive {
			out[k] = o // sluice removed the key; nobody set it since
		}
	}
	return out
}

// emptyLike is the empty value of v's kind: what sluice's addition
// reverts to when it is reverted inside an edited value.
func emptyLike(v any) any {
	switch v.(type) {
	case map[string]any:
		return map[string]any{}
	case []any:
		return []any{}
	}
	return nil
}

func revertList(live, original, applied []any) []any {
	origOf := pair(applied, original, func(int) bool { return true })
	// An element sluice inserted is taken for one of live's only when it
	// is still exactly as sluice wrote it: an element someone else wrote
	// that merely resembles it is theirs.
	appliedOf := pair(live, applied, func(k int) bool { return origOf[k] >= 0 })
	out := make([]any, 0, len(live))
	for i, l := range live {
		k := appliedOf[i]
		switch {
		case k < 0:
			out = append(out, l) // someone else's element
		case origOf[k] < 0:
			// sluice inserted it: drop it
		default:
			out = append(out, Revert(l, original[origOf[k]], applied[k]))
		}
	}
	return out
}

// pair returns, for each element of xs, the index of its counterpart in
// ys, or -1. Equal elements are paired first, as a longest common
// subsequence; the elements between two such pairs are then paired in
// order, the most alike first (see likeness), but only with the ys that
// alike admits.
func pair(xs, ys []any, alike func(j int) bool) []int {
	out := make([]int, len(xs))
	for i := range out {
		out[i] = -1
	}
	// Longest common subsequence of equal elements.
	n, m := len(xs), len(ys)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case reflect.DeepEqual(xs[i], ys[j]):
				lcs[i][j] = lcs[i+1][j+1] + 1
			case lcs[i+1][j] >= lcs[i][j+1]:
				lcs[i][j] = lcs[i+1][j]
			default:
				lcs[i][j] = lcs[i][j+1]
			}
		}
	}
	var anchors [][2]int
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case reflect.DeepEqual(xs[i], ys[j]) && lcs[i][j] == lcs[i+1][j+1]+1:
			anchors = append(anchors, [2]int{i, j})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	anchors = append(anchors, [2]int{n, m})
	pi, pj := 0, 0
	for _, a := range anchors {
		pairGap(xs, ys, pi, a[0], pj, a[1], alike, out)
		if a[0] < n {
			out[a[0]] = a[1]
		}
		pi, pj = a[0]+1, a[1]+1
	}
	return out
}

// pairGap pairs xs[i0:i1] with ys[j0:j1] in order, maximising the sum
// of the pairs' likeness; elements that are nothing alike are not paired.
func pairGap(xs, ys []any, i0, i1, j0, j1 int, alike func(int) bool, out []int) {
	n, m := i1-i0, j1-j0
	if n <= 0 || m <= 0 {
		return
	}
	like := make([][]int, n)
	best := make([][]int, n+1)
	for i := range best {
		best[i] = make([]int, m+1)
		if i < n {
			like[i] = make([]int, m)
			for j := range like[i] {
				if alike(j0 + j) {
					like[i][j] = likeness(xs[i0+i], ys[j0+j])
				}
			}
		}
	}
	take := func(i, j int) int {
		if like[i][j] == 0 {
			return -1
		}
		return like[i][j] + best[i+1][j+1]
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			best[i][j] = max(take(i, j), best[i+1][j], best[i][j+1])
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case best[i][j] == take(i, j):
			out[i0+i] = j0 + j
			i, j = i+1, j+1
		case best[i][j] == best[i+1][j]:
			i++
		default:
			j++
		}
	}
}

// likeness measures how much of x is in y: 2 for an equal value; for two
// maps the sum over x's keys of the likeness of their values; for two
// lists the sum over x's elements of their likeness to the most alike
// element of y. So the rule whose matches are the same is more like the
// original rule than a copy with other matches, and the backendRef that
// names the same Service more like the original one than the canary's.
func likeness(x, y any) int {
	if reflect.DeepEqual(x, y) {
		return 2
	}
	switch xv := x.(type) {
	case map[string]any:
		ym, ok := y.(map[string]any)
		if !ok {
			return 0
		}
		n := 0
		for k, v := range xv {
			if w, ok := ym[k]; ok {
				n += likeness(v, w)
			}
		}
		return n
	case []any:
		yl, ok := y.([]any)
		if !ok {
			return 0
		}
		n := 0
		for _, v := range xv {
			b := 0
			for _, w := range yl {
				b = max(b, likeness(v, w))
			}
			n += b
		}
		return n
	}
	return 0
}

// RevertAny is Revert of values in any Go form (typed structs, maps of
// int64, ...): each is turned into its JSON form first. The result is in
// JSON form.
func RevertAny(live, original, applied any) (any, error) {
	forms := make([]any, 3)
	for i, v := range []any{live, original, applied} {
		f, err := JSONForm(v)
		if err != nil {
			return nil, err
		}
		forms[i] = f
	}
	return Revert(forms[0], forms[1], forms[2]), nil
}

// JSONForm is v as encoding/json decodes its JSON into an any: the form
// Revert compares.
func JSONForm(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
