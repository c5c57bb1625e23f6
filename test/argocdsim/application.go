package argocdsim

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/gitops/appliedcommit"
)

// inClusterServer is the destination server of Applications that deploy to
// the cluster Argo CD runs in.
const inClusterServer = "https://kubernetes.default.svc"

// ensureApplication creates the Application, and its namespace, unless they
// exist.
func (s *Sim) ensureApplication(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.o.Namespace}}
	if err := s.c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", s.o.Namespace, err)
	}
	app := s.application()
	var options []any
	if s.o.ServerSideApply {
		options = append(options, "ServerSideApply=true")
	}
	app.Object["spec"] = map[string]any{
		"project":     "default",
		"source":      s.source(),
		"destination": s.destination(),
		"syncPolicy": map[string]any{
			"automated":   map[string]any{"prune": false, "selfHeal": true},
			"syncOptions": options,
		},
	}
	if err := s.c.Create(ctx, app); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Application %s/%s: %w", s.o.Namespace, s.o.Name, err)
	}
	return nil
}

// recordSync writes the outcome of a pass into the Application's status,
// when it changed: the sync status and compared revision, and after a sync
// that wrote (or failed), the operation state.
func (s *Sim) recordSync(ctx context.Context, sha string, wrote bool, syncErr error) error {
	app := s.application()
	if err := s.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		return fmt.Errorf("reading Application %s/%s: %w", s.o.Namespace, s.o.Name, err)
	}
	state := "Synced"
	if syncErr != nil {
		state = "OutOfSync"
	}
	oldRev, _, _ := unstructured.NestedString(app.Object, "status", "sync", "revision")
	oldState, _, _ := unstructured.NestedString(app.Object, "status", "sync", "status")
	if oldRev == sha && oldState == state && !wrote && syncErr == nil {
		return nil
	}
	now := time.Now().UTC().Format(time.RFC3339)
	status := map[string]any{
		"sync": map[string]any{
			"status":     state,
			"revision":   sha,
			"comparedTo": map[string]any{"source": s.source(), "destination": s.destination()},
		},
		"reconciledAt": now,
	}
	if wrote || syncErr != nil {
		phase, message := "Succeeded", "successfully synced (all tasks run)"
		if syncErr != nil {
			phase, message = "Failed", syncErr.Error()
		}
		status["operationState"] = map[string]any{
			"phase": phase, "message": message, "startedAt": now, "finishedAt": now,
			"operation":  map[string]any{"sync": map[string]any{"revision": sha}, "initiatedBy": map[string]any{"automated": true}},
			"syncResult": map[string]any{"revision": sha, "source": s.source()},
		}
	}
	// The Application CRD has no status subresource: status is part of the
	// object. The patch names the resourceVersion read, so two passes never
	// interleave their writes.
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": app.GetResourceVersion()},
		"status":   status,
	})
	if err != nil {
		return err
	}
	if err := s.c.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("writing the status of Application %s/%s: %w", s.o.Namespace, s.o.Name, err)
	}
	return nil
}

func (s *Sim) application() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(appliedcommit.ApplicationGVK)
	u.SetNamespace(s.o.Namespace)
	u.SetName(s.o.Name)
	return u
}

func (s *Sim) source() map[string]any {
	return map[string]any{"repoURL": s.o.RepoURL, "path": s.o.Path, "targetRevision": s.o.Branch}
}

func (s *Sim) destination() map[string]any {
	return map[string]any{"server": inClusterServer, "namespace": s.o.Destination}
}
