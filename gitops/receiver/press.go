package receiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/gitops/commitid"
)

// PressesAnnotation is the GitGate annotation that holds the newest button presses on
// sluice's check runs, as a JSON list of SignedPress, oldest first. GitHub offers no API to
// read past presses, so the replica that received the check_run delivery records it here,
// through the API, for the leader to act on.
const PressesAnnotation = "gitops.sluice.dev/check-run-presses"

// MaxPresses is how many presses the annotation keeps; the oldest are dropped first.
const MaxPresses = 20

// pressDomain separates the MAC of a press from any other use of the webhook secret.
const pressDomain = "sluice check-run press v1\x00"

// Press is a button pressed on one of sluice's check runs: who pressed which button of the
// check run of which Rollout on which commit, when, in which delivery. It is an intent, not a
// decision: the GitOps controller applies it under the gate's approval policy as an approval
// (or promotion, or rollback) by the person who pressed it.
type Press struct {
	// Repository is the repository of the check run, "owner/name".
	Repository string `json:"repository"`
	// Rollout is the Rollout the check run reports, "namespace/name" (its external_id).
	Rollout string `json:"rollout"`
	// HeadSHA is the commit the check run is on.
	HeadSHA string `json:"headSHA"`
	// CheckRun is the check run's id.
	CheckRun int64 `json:"checkRun"`
	// Identifier is the button's identifier (requested_action.identifier), e.g. "approve-2".
	Identifier string `json:"identifier"`
	// By is the login of who pressed it (sender.login).
	By string `json:"by"`
	// At is when the delivery was received, in UTC.
	At time.Time `json:"at"`
	// Delivery is the delivery's X-GitHub-Delivery id: one press, however often it is
	// delivered.
	Delivery string `json:"delivery"`
}

// SignedPress is a Press with an HMAC-SHA256 over its canonical form made with the webhook
// secret of the GitGate it is recorded on: whoever may edit the GitGate but does not know
// the secret cannot record a press that verifies.
type SignedPress struct {
	Press
	// MAC is the hex HMAC-SHA256 of the press (see Press.Sign).
	MAC string `json:"mac"`
}

// PressOf is the press a check_run requested_action event records, received at.
func PressOf(e Event, at time.Time) (Press, error) {
	if e.Kind != KindCheckRun || e.Action != ActionRequestedAction {
		return Press{}, fmt.Errorf("a %s %s delivery is not a button press", e.Kind, e.Action)
	}
	p := Press{Repository: e.Repository, Rollout: e.ExternalID, HeadSHA: e.SHA, CheckRun: e.CheckRun, Identifier: e.Identifier,
		By: e.Sender, At: at.UTC(), Delivery: e.Delivery}
	return p, p.check()
}

// check tells whether every field of the press is there.
func (p Press) check() error {
	ns, name, ok := strings.Cut(p.Rollout, "/")
	switch {
	case p.Repository == "":
		return errors.New("press: no repository")
	case !ok || ns == "" || name == "" || strings.Contains(name, "/"):
		return fmt.Errorf("press: rollout %q is not namespace/name", p.Rollout)
	case !commitid.Valid(p.HeadSHA):
		return fmt.Errorf("press: head SHA %q is not a commit id", p.HeadSHA)
	case p.Identifier == "" || p.By == "" || p.Delivery == "" || p.At.IsZero():
		return errors.New("press: identifier, by, at and delivery are required")
	}
	return nil
}

// canonical is the exact bytes the MAC covers: the domain, then the press as JSON with its
// fields in their declared order and At in UTC to the nanosecond.
func (p Press) canonical() []byte {
	p.At = p.At.UTC()
	b, _ := json.Marshal(p) // a struct of strings, ints and a time always encodes
	return append([]byte(pressDomain), b...)
}

// Sign returns the press with its MAC made with secret, a GitGate's webhook secret.
func (p Press) Sign(secret []byte) SignedPress {
	p.At = p.At.UTC()
	mac := hmac.New(sha256.New, secret)
	_, _ = mac.Write(p.canonical())
	return SignedPress{Press: p, MAC: hex.EncodeToString(mac.Sum(nil))}
}

// Verify returns the press when its MAC was made with secret over exactly its fields, and an
// error otherwise (a field changed, another secret, no secret, a malformed MAC), compared in
// constant time.
func (s SignedPress) Verify(secret []byte) (Press, error) {
	if len(secret) == 0 {
		return Press{}, errors.New("press: no secret to verify it with")
	}
	if err := s.check(); err != nil {
		return Press{}, err
	}
	got, err := hex.DecodeString(s.MAC)
	if err != nil || len(got) != sha256.Size {
		return Press{}, errors.New("press: the MAC is not 64 hex digits")
	}
	want, _ := hex.DecodeString(s.Sign(secret).MAC)
	if !hmac.Equal(got, want) {
		return Press{}, fmt.Errorf("press of delivery %s: the MAC does not match the gate's webhook secret", s.Delivery)
	}
	return s.Press, nil
}

// DecodePresses reads the value of PressesAnnotation ("" is none).
func DecodePresses(v string) ([]SignedPress, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var list []SignedPress
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", PressesAnnotation, err)
	}
	return list, nil
}

// EncodePresses writes the value of PressesAnnotation.
func EncodePresses(list []SignedPress) string {
	b, _ := json.Marshal(list)
	return string(b)
}

// AddPress adds p to list unless a press of the same delivery is there already (a
// redelivery, or a replay), keeping the MaxPresses newest; added tells whether it was added.
func AddPress(list []SignedPress, p SignedPress) (out []SignedPress, added bool) {
	if slices.ContainsFunc(list, func(o SignedPress) bool { return o.Delivery == p.Delivery }) {
		return list, false
	}
	out = append(slices.Clone(list), p)
	if len(out) > MaxPresses {
		out = out[len(out)-MaxPresses:]
	}
	return out, true
}
