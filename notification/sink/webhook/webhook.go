// Package webhook posts notifications as JSON to a URL, signed with
// HMAC-SHA256 when a secret is given.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	"github.com/sluice-dev/sluice/notification/sink"
)

// Headers of each request.
const (
	// HeaderEvent is the transition.
	HeaderEvent = "X-Sluice-Event"
	// HeaderDelivery is the notification's key, the same for every attempt.
	HeaderDelivery = "X-Sluice-Delivery"
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256 of the body.
	HeaderSignature = "X-Sluice-Signature-256"
)

// Sink posts to one URL.
type Sink struct {
	// URL receives the notifications.
	URL string
	// Secret signs them; empty sends them unsigned.
	Secret []byte
	// Client sends the requests.
	Client *http.Client
}

var _ sink.Sink = (*Sink)(nil)

// Send posts n as JSON.
func (s *Sink) Send(ctx context.Context, n notificationv1alpha1.Notification) error {
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sluice")
	req.Header.Set(HeaderEvent, string(n.Event))
	req.Header.Set(HeaderDelivery, n.Key)
	if len(s.Secret) > 0 {
		req.Header.Set(HeaderSignature, Sign(s.Secret, body))
	}
	return Do(s.Client, req)
}

// Do sends req and turns an answer other than 2xx into a *sink.StatusError.
func Do(c *http.Client, req *http.Request) error {
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("posting to %s: %w", req.URL.Redacted(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &sink.StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	return nil
}

// Sign is the signature header's value for body: "sha256=<hex HMAC>".
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports, in constant time, whether signature signs body.
func Verify(secret, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}
