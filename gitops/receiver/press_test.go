package receiver

import (
	"strings"
	"testing"
	"time"
)

func aPress() Press {
	return Press{Repository: "acme/shop", Rollout: "prod/checkout", HeadSHA: headSHA, CheckRun: 42, Identifier: "approve-1",
		By: "reviewer", At: time.Date(2030, 5, 1, 12, 0, 0, 123, time.UTC), Delivery: "d-1"}
}

// A signed press verifies with the gate's secret only, and only as it was signed: any field
// changed, another secret, no secret or a damaged MAC is refused.
func TestSignedPress_verify(t *testing.T) {
	gateSecret := []byte("gate-secret")
	tests := []struct {
		name    string
		tamper  func(*SignedPress)
		secret  []byte
		wantErr string
	}{
		{name: "as signed", secret: gateSecret},
		{name: "through the annotation", tamper: func(s *SignedPress) {
			list, err := DecodePresses(EncodePresses([]SignedPress{*s}))
			if err != nil || len(list) != 1 {
				panic(err)
			}
			*s = list[0]
		}, secret: gateSecret},
		{name: "another presser", tamper: func(s *SignedPress) { s.By = "admin" }, secret: gateSecret, wantErr: "does not match"},
		{name: "another button", tamper: func(s *SignedPress) { s.Identifier = "promote" }, secret: gateSecret, wantErr: "does not match"},
		{name: "another rollout", tamper: func(s *SignedPress) { s.Rollout = "prod/cart" }, secret: gateSecret, wantErr: "does not match"},
		{name: "another commit", tamper: func(s *SignedPress) { s.HeadSHA = afterSHA }, secret: gateSecret, wantErr: "does not match"},
		{name: "another repository", tamper: func(s *SignedPress) { s.Repository = "acme/other" }, secret: gateSecret, wantErr: "does not match"},
		{name: "later", tamper: func(s *SignedPress) { s.At = s.At.Add(time.Hour) }, secret: gateSecret, wantErr: "does not match"},
		{name: "another delivery", tamper: func(s *SignedPress) { s.Delivery = "d-2" }, secret: gateSecret, wantErr: "does not match"},
		{name: "another check run", tamper: func(s *SignedPress) { s.CheckRun = 43 }, secret: gateSecret, wantErr: "does not match"},
		{name: "wrong secret", secret: []byte("guess"), wantErr: "does not match"},
		{name: "no secret", secret: nil, wantErr: "no secret"},
		{name: "MAC not hex", tamper: func(s *SignedPress) { s.MAC = "zz" + s.MAC[2:] }, secret: gateSecret, wantErr: "not 64 hex"},
		{name: "MAC cut", tamper: func(s *SignedPress) { s.MAC = s.MAC[:62] }, secret: gateSecret, wantErr: "not 64 hex"},
		{name: "forged without the secret", tamper: func(s *SignedPress) { *s = s.Sign([]byte("the editor's guess")) }, secret: gateSecret, wantErr: "does not match"},
		{name: "no presser", tamper: func(s *SignedPress) {
			*s = Press{Repository: "acme/shop", Rollout: "prod/checkout", HeadSHA: headSHA, Identifier: "x", At: time.Now(), Delivery: "d"}.Sign(gateSecret)
		}, secret: gateSecret, wantErr: "required"},
		{name: "rollout not namespace/name", tamper: func(s *SignedPress) { p := s.Press; p.Rollout = "checkout"; *s = p.Sign(gateSecret) }, secret: gateSecret, wantErr: "namespace/name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := aPress().Sign(gateSecret)
			if tt.tamper != nil {
				tt.tamper(&s)
			}
			p, err := s.Verify(tt.secret)
			if tt.wantErr == "" {
				if err != nil || p != aPress() {
					t.Fatalf("Verify() = %+v, %v; want the press", p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Verify() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// A delivery recorded twice (GitHub's redelivery, or a replay of the same delivery) is one
// press; the annotation keeps the MaxPresses newest.
func TestAddPress_oncePerDeliveryAndBounded(t *testing.T) {
	secret := []byte("gate-secret")
	p := aPress().Sign(secret)
	list, added := AddPress(nil, p)
	if !added || len(list) != 1 {
		t.Fatalf("first press: added %v, %d recorded", added, len(list))
	}
	replay := p
	replay.At = replay.At.Add(time.Minute) // a replay received later, same delivery
	if list, added = AddPress(list, replay); added || len(list) != 1 {
		t.Fatalf("replayed delivery: added %v, %d recorded; want one press", added, len(list))
	}
	for i := range MaxPresses + 5 {
		q := aPress()
		q.Delivery = "d-" + strings.Repeat("x", i+2)
		list, _ = AddPress(list, q.Sign(secret))
	}
	if len(list) != MaxPresses || list[len(list)-1].Delivery != "d-"+strings.Repeat("x", MaxPresses+6) {
		t.Fatalf("%d presses kept, the newest %s; want the %d newest", len(list), list[len(list)-1].Delivery, MaxPresses)
	}
	if _, err := DecodePresses("{not json"); err == nil {
		t.Fatal("a damaged annotation decoded")
	}
	if got, err := DecodePresses(""); err != nil || got != nil {
		t.Fatalf("empty annotation = %v, %v", got, err)
	}
}

// The annotation is outside input (anyone who may edit the GitGate writes it): whatever it
// holds decodes or fails, and nothing in it verifies without the secret.
func FuzzDecodePresses(f *testing.F) {
	secret := []byte("gate-secret")
	f.Add(EncodePresses([]SignedPress{aPress().Sign(secret)}))
	f.Add(`[{"rollout":"a/b","mac":"00"}]`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, v string) {
		list, err := DecodePresses(v)
		if err != nil {
			return
		}
		for _, s := range list {
			p, err := s.Verify(secret)
			if err == nil && s.Press.Sign(secret).MAC != s.MAC {
				t.Fatalf("press %+v verified with a MAC it was not signed with", p)
			}
		}
	})
}
