package gitops

import (
	"context"
	"fmt"
	"sync"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/gitops/scm/hosts"
)

// clients are the Git reader and the SCM client of one GitGate, kept between
// reconciles so fetches stay incremental and posted statuses remembered.
type clients struct {
	// key changes when the spec or a secret changes.
	key string
	git git.Reader
	// scm is nil when the gate names no SCM host: Git alone.
	scm  scm.Client
	keys *git.Keyring
	// merged remembers the pull requests of merge commits, and settled
	// the Git answers that never change (see memo.go).
	merged  *mergedPRs
	settled *settledGit
	// checks writes check runs: the SCM client of a GitHub App; nil for
	// the others.
	checks scm.CheckRunWriter
	// denied remembers that the host refused comments or check runs.
	denied *surfaceDenied
}

// clientCache holds the clients of every GitGate.
type clientCache struct {
	mu sync.Mutex
	m  map[client.ObjectKey]*clients
}

func (c *clientCache) get(k client.ObjectKey) *clients {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *clientCache) put(k client.ObjectKey, v *clients) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[client.ObjectKey]*clients{}
	}
	c.m[k] = v
}

func (c *clientCache) drop(k client.ObjectKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// clientsFor returns the clients of gg, building them when the spec or a
// secret changed. Errors are configuration errors: a missing secret or key.
func (r *Reconciler) clientsFor(ctx context.Context, gg *gitopsv1alpha1.GitGate) (*clients, error) {
	gitSecret, err := r.secret(ctx, gg.Namespace, gg.Spec.Git.SecretRef)
	if err != nil {
		return nil, err
	}
	host, cfg := scmOf(gg)
	var ghSecret *corev1.Secret
	if host != "" {
		if ghSecret, err = r.secret(ctx, gg.Namespace, &meta.LocalObjectReference{Name: cfg.SecretName}); err != nil {
			return nil, err
		}
	}
	keySecret, err := r.secret(ctx, gg.Namespace, gg.Spec.Approval.SigningKeysSecretRef)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%d/%s/%s/%s", gg.Generation, version(gitSecret), version(ghSecret), version(keySecret))
	k := client.ObjectKeyFromObject(gg)
	if c := r.cache.get(k); c != nil && c.key == key {
		return c, nil
	}
	c := &clients{key: key, denied: &surfaceDenied{}}
	if c.git, err = git.New(git.Options{
		URL: gg.Spec.Git.URL, Branch: branchOf(gg), Auth: gitAuth(gitSecret), CABundle: data(gitSecret, "ca.crt"),
		AllowInsecureHTTP: r.AllowInsecureHTTP,
	}); err != nil {
		return nil, fmt.Errorf("git: %w", err)
	}
	if host != "" {
		cfg.Secret, cfg.Observer = ghSecret.Data, r.SCMObserver
		factories := r.SCMHosts
		if factories == nil {
			factories = hosts.Default()
		}
		if c.scm, err = factories.New(host, cfg); err != nil {
			return nil, err
		}
		c.checks, _ = c.scm.(scm.CheckRunWriter)
	}
	if keySecret != nil {
		if c.keys, err = git.ParseKeyring(data(keySecret, "openpgp"), data(keySecret, "allowed_signers")); err != nil {
			return nil, fmt.Errorf("signing keys secret %s: %w", keySecret.Name, err)
		}
	}
	r.cache.put(k, c)
	return c, nil
}

// secret reads a Secret of ns; nil ref gives nil.
func (r *Reconciler) secret(ctx context.Context, ns string, ref *meta.LocalObjectReference) (*corev1.Secret, error) {
	if ref == nil {
		return nil, nil
	}
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, s); err != nil {
		return nil, fmt.Errorf("reading secret %s: %w", ref.Name, err)
	}
	return s, nil
}

func version(s *corev1.Secret) string {
	if s == nil {
		return "-"
	}
	return s.ResourceVersion
}

func data(s *corev1.Secret, key string) []byte {
	if s == nil {
		return nil
	}
	return s.Data[key]
}

func gitAuth(s *corev1.Secret) git.Auth {
	return git.Auth{
		Username: string(data(s, "username")), Password: string(data(s, "password")),
		BearerToken: string(data(s, "bearerToken")), SSHPrivateKey: data(s, "identity"),
		SSHPassphrase: string(data(s, "passphrase")), KnownHosts: data(s, "known_hosts"),
	}
}

// scmOf names the SCM host of gg and the configuration of its client;
// "" when the gate names none (it works from Git alone). spec.github is
// spec.scm with provider github.
func scmOf(gg *gitopsv1alpha1.GitGate) (scm.Host, scm.Config) {
	if r := scmRepositoryOf(gg); r != nil {
		return scm.Host(r.Provider), scm.Config{Repository: r.Repository, APIURL: r.APIURL, SecretName: r.SecretRef.Name}
	}
	return "", scm.Config{}
}

// scmRepositoryOf is gg's spec.scm, or its spec.github in that form; nil
// when it names no host.
func scmRepositoryOf(gg *gitopsv1alpha1.GitGate) *gitopsv1alpha1.SCMRepository {
	if gg.Spec.SCM != nil {
		return gg.Spec.SCM
	}
	if gh := gg.Spec.GitHub; gh != nil {
		return &gitopsv1alpha1.SCMRepository{Provider: gitopsv1alpha1.SCMGitHub, Repository: gh.Repository, APIURL: gh.APIURL,
			SecretRef: gh.SecretRef, ProposeRevert: gh.ProposeRevert}
	}
	return nil
}

// repositoryOf is the SCM repository ("owner/name") gg is bound to; ""
// without one.
func repositoryOf(gg *gitopsv1alpha1.GitGate) string {
	_, cfg := scmOf(gg)
	return cfg.Repository
}

func branchOf(gg *gitopsv1alpha1.GitGate) string {
	if gg.Spec.Git.Branch == "" {
		return "main"
	}
	return gg.Spec.Git.Branch
}
