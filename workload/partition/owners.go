package partition

import (
	"context"
	"strings"

	"github.com/sluice-dev/sluice/workload/ownership"
)

// heldFields are the fields of the kind a release changes, as dotted
// paths: the partition and, blue-green, the rest of its hold. Claim
// records who owns them (ownership.RecordInto) and the hand-back gives
// them back.
func (r *Releaser) heldFields() []string {
	paths := [][]string{r.p.partition}
	if r.blueGreen {
		paths = append(paths, r.p.blueGreenPaths()...)
	}
	var out []string
	for _, p := range paths {
		if len(p) > 0 {
			out = append(out, strings.Join(p, "."))
		}
	}
	return out
}

// handBack gives o's held fields back to the field managers that owned
// them when the release claimed it, and drops sluice's managedFields entry.
func (r *Releaser) handBack(ctx context.Context, o object) error {
	return ownership.HandBackFields(ctx, r.client, r.reader, o.u, o.name())
}
