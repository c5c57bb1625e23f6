package partition

import (
	"strings"

	"github.com/sluice-dev/sluice/workload/ownership"
)

// heldFields are the fields of the kind a release changes, as dotted
// paths: the partition and, blue-green, the rest of its hold.
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

// recordOwners adds to annotations, when o has no record yet, who owns
// the fields the release is about to change (sluice's updates take them
// over), so that the hand-back (ownership.HandBackFields) gives them back
// and sluice owns nothing of a handed-back workload.
func (r *Releaser) recordOwners(o object, annotations map[string]any) error {
	if _, ok := o.u.GetAnnotations()[ownership.Annotation]; ok {
		return nil
	}
	owners, err := ownership.Record(o.u.GetManagedFields(), r.heldFields()...)
	if err != nil {
		return err
	}
	annotations[ownership.Annotation] = owners.Encode()
	return nil
}
