package web

import (
	"net/url"
	"sort"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
)

// Summary is one row of the index page.
type Summary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Phase     string `json:"phase"`
	// Step is "i/n", or "-" when no step is current.
	Step  string `json:"step"`
	State string `json:"state,omitempty"`
	// Revision is the revision being released, else the stable one.
	Revision string `json:"revision,omitempty"`
	// Link is the path of the Rollout's page.
	Link string `json:"link"`
}

// Summaries lists rollouts for the index page, by namespace and name.
func Summaries(rollouts []rolloutsv1beta1.Rollout) []Summary {
	out := make([]Summary, 0, len(rollouts))
	for i := range rollouts {
		ro := &rollouts[i]
		p := releaseOf(ro)
		s := Summary{Namespace: ro.Namespace, Name: ro.Name, Phase: string(ro.Status.Phase), Step: "-", Link: PagePath(ro.Namespace, ro.Name)}
		if at := progress.AtStep(ro); at != "" {
			s.Step = at
		}
		if p.ok {
			s.State = string(p.Common.CurrentStepState)
			s.Revision = p.Revision
			if s.Revision == "" {
				s.Revision = p.Common.StableRevision
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// PagePath is the path of the page of the Rollout namespace/name; commit
// statuses link to it.
func PagePath(namespace, name string) string {
	return "/rollouts/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}
