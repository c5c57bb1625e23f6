// Package vars expands the template variables of a MetricGate's queries,
// URLs, bodies and header values: ${name} is replaced by the value the
// Rollout's status gives it when the measurement is taken, and $${ writes a
// literal ${. The names are those of api/analysis/v1alpha1 (namespace,
// rollout, canaryRevision, stableRevision, canaryService, stableService,
// step); any other name is an error, at admission and at measurement.
package vars

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/traffic"
)

// Values are the variables' values, by name.
type Values map[string]string

// Names returns the variables a template may name, sorted.
func Names() []string {
	return []string{
		analysisv1alpha1.VarCanaryRevision, analysisv1alpha1.VarCanaryService,
		analysisv1alpha1.VarNamespace, analysisv1alpha1.VarRollout,
		analysisv1alpha1.VarStableRevision, analysisv1alpha1.VarStableService,
		analysisv1alpha1.VarStep,
	}
}

func known(name string) bool { return slices.Contains(Names(), name) }

// Of returns the values for ro at step (0 for a background analysis). A
// Rollout without trafficRoutings has no Services: a template naming them
// fails to expand.
func Of(ro *rolloutsv1beta1.Rollout, step int32) Values {
	v := Values{
		analysisv1alpha1.VarNamespace: ro.Namespace,
		analysisv1alpha1.VarRollout:   ro.Name,
		analysisv1alpha1.VarStep:      strconv.Itoa(int(step)),
	}
	if p, ok := progress.Of(ro); ok {
		v[analysisv1alpha1.VarCanaryRevision] = p.NewPodRevision()
		v[analysisv1alpha1.VarStableRevision] = p.Common.StableRevision
	}
	if trs := ro.Spec.Strategy.TrafficRoutings(); len(trs) > 0 && trs[0].Service != "" {
		v[analysisv1alpha1.VarStableService] = trs[0].Service
		canary := traffic.CanaryServiceName(trs[0].Service)
		if c := ro.Spec.Strategy.Canary; c != nil && c.DisableGenerateCanaryService {
			canary = trs[0].Service
		}
		v[analysisv1alpha1.VarCanaryService] = canary
	}
	return v
}

// Check reports the first unknown variable or malformed reference in s.
func Check(s string) error {
	_, err := expand(s, nil)
	return err
}

// Expand replaces the variables of s with their values. A variable
// without a value (a Service of a Rollout without trafficRoutings, a
// revision before the release started) is an error that names it.
func Expand(s string, v Values) (string, error) {
	return expand(s, v)
}

func expand(s string, v Values) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ at offset %d", i)
			}
			name := s[i+2 : i+2+end]
			if !known(name) {
				return "", fmt.Errorf("unknown variable ${%s}; use one of %s (or $${ for a literal ${)", name, strings.Join(Names(), ", "))
			}
			if v != nil {
				val, ok := v[name]
				if !ok || val == "" {
					return "", fmt.Errorf("variable ${%s} has no value for this Rollout%s", name, why(name))
				}
				b.WriteString(val)
			}
			i += 2 + end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

func why(name string) string {
	switch name {
	case analysisv1alpha1.VarCanaryService, analysisv1alpha1.VarStableService:
		return " (it has no trafficRoutings)"
	case analysisv1alpha1.VarCanaryRevision, analysisv1alpha1.VarStableRevision:
		return " (its release has not started)"
	}
	return ""
}
