package lua

import (
	"encoding/json"
	"fmt"

	"github.com/sluice-dev/sluice/traffic"
)

// Data is what a script sees of an object and returns: the object's
// spec, labels and annotations (OpenKruise Rollouts' shape, also the
// content of OriginalAnnotation).
type Data struct {
	// Spec is the object's spec.
	Spec map[string]any `json:"spec,omitempty"`
	// Labels are the object's labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are the object's annotations.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Input is the global obj a script gets: the object's data before the
// release (so that a script is a pure function of it and the step), and
// what the step wants. canaryWeight is -1 when the step sets no weight,
// and stableWeight then is -1 too.
func Input(original Data, d traffic.Desired) (map[string]any, error) {
	data, err := jsonForm(original)
	if err != nil {
		return nil, err
	}
	canary, stable := int64(-1), int64(-1)
	if d.Weight != nil {
		canary, stable = int64(*d.Weight), 100-int64(*d.Weight)
	}
	in := map[string]any{
		"data":          data,
		"canaryWeight":  canary,
		"stableWeight":  stable,
		"canaryService": d.CanaryService,
		"stableService": d.StableService,
	}
	if len(d.Matches) > 0 {
		if in["matches"], err = jsonForm(d.Matches); err != nil {
			return nil, err
		}
	}
	if d.RequestHeaderModifier != nil {
		if in["requestHeaderModifier"], err = jsonForm(d.RequestHeaderModifier); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// jsonForm is v as encoding/json decodes its JSON into an any.
func jsonForm(v any) (any, error) {
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

// ResultOf reads a script's decoded result as Data: a table with a table
// spec, and optional labels and annotations of strings; any other key is
// an error.
func ResultOf(v any) (Data, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Data{}, fmt.Errorf("the script returned %s, not a table with a spec", kindOf(v))
	}
	var out Data
	for k, e := range m {
		switch k {
		case "spec":
			spec, ok := e.(map[string]any)
			if !ok {
				return Data{}, fmt.Errorf("spec is %s, not a table with keys", kindOf(e))
			}
			out.Spec = spec
		case "labels", "annotations":
			s, err := stringMap(e)
			if err != nil {
				return Data{}, fmt.Errorf("%s: %w", k, err)
			}
			if k == "labels" {
				out.Labels = s
			} else {
				out.Annotations = s
			}
		default:
			return Data{}, fmt.Errorf("unknown key %q (want spec, labels, annotations)", k)
		}
	}
	if out.Spec == nil {
		return Data{}, fmt.Errorf("the result has no spec")
	}
	return out, nil
}

func stringMap(v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s, not a table of strings", kindOf(v))
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a string", k, kindOf(e))
		}
		out[k] = s
	}
	return out, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a table"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("a %T", v)
}
