package gitops

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

// secretStore is a client.Reader of Secrets that counts its reads.
type secretStore struct {
	mu    sync.Mutex
	data  map[string]string // name -> token
	reads int
}

func (s *secretStore) Get(_ context.Context, k client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	v, ok := s.data[k.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, k.Name)
	}
	obj.(*corev1.Secret).Data = map[string][]byte{"token": []byte(v)}
	return nil
}

func (s *secretStore) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

func gateWithSecret(ns, name, repo, secret string) gitopsv1alpha1.GitGate {
	g := gitopsv1alpha1.GitGate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Spec.GitHub = &gitopsv1alpha1.GitHubRepository{Repository: repo}
	if secret != "" {
		g.Spec.WebhookSecretRef = &meta.LocalObjectReference{Name: secret}
	}
	return g
}

// Deliveries read the secrets from memory: once on the first, again after
// webhookSecretMaxAge, and on a refresh at most every
// webhookSecretMinRefresh, so forged deliveries cost no reads.
func TestWebhookSecrets_rememberedAndRefreshedBoundedly(t *testing.T) {
	store := &secretStore{data: map[string]string{"hook": "one", "other": "two"}}
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	r := &Reconciler{APIReader: store, Clock: clk}
	ctx := context.Background()
	gates := []gitopsv1alpha1.GitGate{
		gateWithSecret("a", "shop", "acme/shop", "hook"),
		gateWithSecret("b", "shop", "acme/shop", "other"),
		gateWithSecret("c", "none", "acme/none", ""),
		gateWithSecret("d", "gone", "acme/gone", "missing"),
	}
	suspended := gateWithSecret("e", "off", "acme/off", "hook")
	suspended.Spec.Suspend = true
	gates = append(gates, suspended)

	got := r.webhookSecretsOf(ctx, gates, false, true)
	if len(got) != 2 || string(got[0].Value) != "one" || string(got[1].Value) != "two" || got[0].Repository != "acme/shop" {
		t.Fatalf("secrets = %+v, want one and two of acme/shop", got)
	}
	if store.reads != 3 {
		t.Fatalf("%d reads, want 3 (hook, other, missing)", store.reads)
	}
	for range 10 {
		r.webhookSecretsOf(ctx, gates, false, true)
		r.webhookSecretsOf(ctx, gates, true, true) // refreshes within the minimum interval
	}
	if store.reads != 3 {
		t.Fatalf("%d reads after 20 deliveries within a second, want still 3", store.reads)
	}

	// A rotated secret is seen on the first refresh after the minimum interval.
	store.data["hook"] = "rotated"
	clk.SetTime(clk.Now().Add(webhookSecretMinRefresh))
	if got := r.webhookSecretsOf(ctx, gates, false, true); string(got[0].Value) != "one" {
		t.Fatalf("without refresh the secret is %q, want the remembered one", got[0].Value)
	}
	if got := r.webhookSecretsOf(ctx, gates, true, true); string(got[0].Value) != "rotated" {
		t.Fatalf("after a refresh the secret is %q, want rotated", got[0].Value)
	}
	if store.reads != 6 {
		t.Fatalf("%d reads, want 6", store.reads)
	}
	// And every secret is read again after the maximum age.
	clk.SetTime(clk.Now().Add(webhookSecretMaxAge))
	r.webhookSecretsOf(ctx, gates, false, true)
	if store.reads != 9 {
		t.Fatalf("%d reads, want 9", store.reads)
	}
	// The secrets of gates gone are forgotten.
	r.webhookSecretsOf(ctx, gates[:1], false, true)
	if n := len(r.secrets.entries); n != 1 {
		t.Fatalf("%d secrets remembered, want 1", n)
	}
}

// Every hint changes reconcile.fluxcd.io/requestedAt, even two within one
// tick of the clock.
func TestHintClock_everyValueIsNew(t *testing.T) {
	var c hintClock
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for range 5 {
		v := c.next(now)
		if seen[v] {
			t.Fatalf("value %s handed out twice", v)
		}
		seen[v] = true
	}
	if v := c.next(now.Add(-time.Second)); seen[v] {
		t.Fatalf("a clock going back handed out %s again", v)
	}
}
