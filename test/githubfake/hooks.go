package githubfake

import (
	"context"
	"strings"
)

// repoHook is a repository webhook: where GitHub delivers the repository's events, and the
// secret it signs them with.
type repoHook struct {
	url    string
	secret []byte
}

// HookDelivery is a delivery the fake sent to a repository webhook on its own, as GitHub does
// after a change made through the REST API or a push.
type HookDelivery struct {
	// Delivery is what was sent and the receiver's answer.
	Delivery
	// URL is the hook's payload URL.
	URL string
	// Err says why the delivery could not be sent (the receiver unreachable), or is nil.
	Err error
}

// AddHook adds a webhook for the pull_request and push events to the repository: from then on
// every label added or removed through the REST API (issues/add-labels, issues/remove-label),
// and every NotifyPush, is delivered to url signed with secret, after the API call is
// answered. The Deliver* methods stay explicit: they send to the URL they are given.
func (s *Server) AddHook(fullName, url string, secret []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustRepo(fullName)
	if s.repoHooks == nil {
		s.repoHooks = map[string][]repoHook{}
	}
	key := strings.ToLower(fullName)
	s.repoHooks[key] = append(s.repoHooks[key], repoHook{url: url, secret: append([]byte(nil), secret...)})
}

// HookDeliveries returns the deliveries sent to repository webhooks, oldest first.
func (s *Server) HookDeliveries() []HookDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]HookDelivery(nil), s.delivered...)
}

// NotifyPush delivers a push of branch from before to after, by pusher, to every webhook of the
// repository, as GitHub does when a branch moves, and returns the deliveries. Mirror the
// commits first (MirrorCommit) so that the payload describes the head commit.
func (s *Server) NotifyPush(ctx context.Context, fullName, branch, before, after, pusher string) []HookDelivery {
	return s.deliverToHooks(ctx, fullName, func(ctx context.Context, url string, secret []byte) (Delivery, error) {
		return s.DeliverPush(ctx, url, secret, fullName, branch, before, after, pusher)
	})
}

// hooksOf returns the webhooks of a repository; the caller holds s.mu.
func (s *Server) hooksOf(fullName string) []repoHook {
	return append([]repoHook(nil), s.repoHooks[strings.ToLower(fullName)]...)
}

// deliverToHooks sends one delivery to each webhook of the repository with send, recording
// each. It must be called without s.mu held.
func (s *Server) deliverToHooks(ctx context.Context, fullName string, send func(ctx context.Context, url string, secret []byte) (Delivery, error)) []HookDelivery {
	s.mu.Lock()
	hooks := s.hooksOf(fullName)
	s.mu.Unlock()
	out := make([]HookDelivery, 0, len(hooks))
	for _, h := range hooks {
		d, err := send(ctx, h.url, h.secret)
		out = append(out, HookDelivery{Delivery: d, URL: h.url, Err: err})
	}
	s.mu.Lock()
	s.delivered = append(s.delivered, out...)
	s.mu.Unlock()
	return out
}
