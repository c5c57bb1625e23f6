package e2e

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given an enabled Rollout of a Deployment, and sluice running as its own
// user
// When a user, not sluice, changes the pod template and names the field
// manager "sluice" (kubectl --field-manager=sluice, or the Go client's
// FieldOwner("sluice")), by an update and by a patch
// Then both are held like any other user's update: the Deployment is
// paused, the release starts at step 1 with one new pod, and the rest keep
// the old revision. The webhook recognises sluice by who is authenticated,
// never by a name the client chooses.
func TestWebhook_userNamingFieldManagerSluice_isHeldLikeAnyUser(t *testing.T) {
	for _, how := range []string{"update", "patch"} {
		t.Run(how, func(t *testing.T) {
			ns := newNamespace(t)
			deployment(t, ns, "web", 4, v1)
			createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))

			d := getDeployment(t, ns, "web")
			var err error
			switch how {
			case "update":
				d.Spec.Template.Spec.Containers[0].Image = v2
				err = suite.c.Update(ctxFor(t), d, client.FieldOwner(rolloutsv1beta1.FieldManager))
			default:
				patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, v2)
				err = suite.c.Patch(ctxFor(t), d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)),
					client.FieldOwner(rolloutsv1beta1.FieldManager))
			}
			if err != nil {
				t.Fatalf("%s as field manager sluice: %v", how, err)
			}
			if d := getDeployment(t, ns, "web"); !d.Spec.Paused {
				t.Fatalf("the update of field manager sluice by a user was not held: paused=%v annotations=%v", d.Spec.Paused, d.Annotations)
			}
			waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
			holdsFor(t, 3*time.Second, func() string {
				if got := podImages(t, ns, "web"); got[v2] > 1 {
					return fmt.Sprintf("pods by image %v at step 1, want one on %s", got, v2)
				}
				return ""
			})
			if got := podImages(t, ns, "web"); got[v2] != 1 || got[v1] != 3 {
				t.Fatalf("pods by image %v at step 1, want 1 on %s and 3 on %s", got, v2, v1)
			}
		})
	}
}
