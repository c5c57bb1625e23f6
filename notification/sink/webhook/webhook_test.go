package webhook

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
)

func TestSend_signsTheBodyAndNamesTheDelivery(t *testing.T) {
	secret := []byte("s3cret")
	var got notificationv1alpha1.Notification
	var verified bool
	var delivery, event string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		verified = Verify(secret, body, r.Header.Get(HeaderSignature))
		delivery, event = r.Header.Get(HeaderDelivery), r.Header.Get(HeaderEvent)
		_ = json.Unmarshal(body, &got)
	}))
	defer srv.Close()
	n := notificationv1alpha1.Notification{Key: "k1", Event: notificationv1alpha1.EventStepPaused, Namespace: "shop", Rollout: "checkout", Step: 2}
	if err := (&Sink{URL: srv.URL, Secret: secret}).Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if !verified || delivery != "k1" || event != "StepPaused" || got.Rollout != "checkout" || got.Step != 2 {
		t.Fatalf("verified %v delivery %q event %q body %+v", verified, delivery, event, got)
	}
	if Verify([]byte("other"), []byte("{}"), Sign(secret, []byte("{}"))) {
		t.Fatal("a signature verified with another secret")
	}
}

func TestSend_anAnswerOtherThan2xxIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	err := (&Sink{URL: srv.URL}).Send(context.Background(), notificationv1alpha1.Notification{Key: "k"})
	if err == nil || err.Error() != "the receiver answered 503 Service Unavailable: busy" {
		t.Fatalf("error %v", err)
	}
}
