package gitops

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

// How long the webhook secrets are remembered. sluice is granted get on
// Secrets, not list or watch, so it cannot keep them in an informer: it
// remembers each one it read, reads it again at least every
// webhookSecretMaxAge, and, when a signature matched none (a secret rotated
// a moment ago), at most every webhookSecretMinRefresh, so that a flood of
// forged deliveries costs the API server nothing.
const (
	webhookSecretMaxAge     = 5 * time.Minute
	webhookSecretMinRefresh = 2 * time.Second
)

// WebhookSecret is the webhook secret of one GitGate: key "token" of its
// spec.webhookSecretRef.
type WebhookSecret struct {
	// Value is the secret.
	Value []byte
	// Repository is the GitHub repository of the gate, "owner/name".
	Repository string
}

// secretMemo remembers the webhook secrets read, by Secret.
type secretMemo struct {
	mu      sync.Mutex
	entries map[client.ObjectKey]memoEntry
}

// memoEntry is one Secret's token as read at readAt (nil: no such Secret or
// key).
type memoEntry struct {
	value  []byte
	readAt time.Time
}

// WebhookSecrets returns the webhook secrets of every GitGate that is not
// suspended, for the receiver to verify a delivery's signature with before
// it reads the body. The gates come from the cache and the secrets from
// memory (see webhookSecretMaxAge); refresh reads again the secrets not read
// within webhookSecretMinRefresh. A Secret that cannot be read is left out
// (and logged); its gates' deliveries are refused until it can.
func (r *Reconciler) WebhookSecrets(ctx context.Context, refresh bool) ([]WebhookSecret, error) {
	list := &gitopsv1alpha1.GitGateList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing gitgates: %w", err)
	}
	return r.webhookSecretsOf(ctx, list.Items, refresh, true), nil
}

// SecretsFor returns the webhook secrets of the GitGates bound to the
// repository "owner/name", read like WebhookSecrets (the Gitea and GitLab
// receivers look secrets up by repository).
func (r *Reconciler) SecretsFor(ctx context.Context, repository string) ([][]byte, error) {
	gates, err := r.gatesOfRepository(ctx, repository)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, s := range r.webhookSecretsOf(ctx, gates, false, false) {
		out = append(out, s.Value)
	}
	return out, nil
}

// webhookSecretsOf returns the secrets of gates; all says gates are every
// GitGate, so that the secrets of gone gates are forgotten.
func (r *Reconciler) webhookSecretsOf(ctx context.Context, gates []gitopsv1alpha1.GitGate, refresh, all bool) []WebhookSecret {
	now := r.Clock.Now()
	m := &r.secrets
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[client.ObjectKey]memoEntry{}
	}
	used := map[client.ObjectKey]bool{}
	var out []WebhookSecret
	for i := range gates {
		gg := &gates[i]
		if gg.Spec.WebhookSecretRef == nil || gg.Spec.Suspend {
			continue
		}
		k := client.ObjectKey{Namespace: gg.Namespace, Name: gg.Spec.WebhookSecretRef.Name}
		used[k] = true
		e, ok := m.entries[k]
		age := now.Sub(e.readAt)
		if !ok || age >= webhookSecretMaxAge || (refresh && age >= webhookSecretMinRefresh) {
			v, err := r.readWebhookSecret(ctx, k)
			switch {
			case err == nil:
				e = memoEntry{value: v, readAt: now}
				m.entries[k] = e
			case !ok:
				ctrl.LoggerFrom(ctx).Error(err, "Reading a webhook secret", "gitgate", client.ObjectKeyFromObject(gg))
				continue
			default:
				ctrl.LoggerFrom(ctx).Error(err, "Reading a webhook secret again; keeping the one read before", "gitgate", client.ObjectKeyFromObject(gg))
			}
		}
		if len(e.value) > 0 {
			out = append(out, WebhookSecret{Value: e.value, Repository: repositoryOf(gg)})
		}
	}
	if all {
		for k := range m.entries {
			if !used[k] {
				delete(m.entries, k)
			}
		}
	}
	return out
}

// readWebhookSecret reads key "token" of a Secret, uncached (see
// webhookSecretMaxAge); a missing Secret has no token.
func (r *Reconciler) readWebhookSecret(ctx context.Context, k client.ObjectKey) ([]byte, error) {
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, k, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading secret %s: %w", k.Name, err)
	}
	return s.Data["token"], nil
}
