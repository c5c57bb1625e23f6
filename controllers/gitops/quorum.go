package gitops

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/gitops/codeowners"
)

// person is one approver with every ballot of theirs that counts.
type person struct {
	ballots []ballot
}

// best is the ballot that approves the furthest (the latest of those).
func (p person) best() ballot {
	b := p.ballots[0]
	for _, c := range p.ballots[1:] {
		if c.upTo > b.upTo || c.upTo == b.upTo && c.at.After(b.at) {
			b = c
		}
	}
	return b
}

// latest is the person's latest ballot.
func (p person) latest() ballot {
	b := p.ballots[0]
	for _, c := range p.ballots[1:] {
		if c.at.After(b.at) {
			b = c
		}
	}
	return b
}

// upTo is the furthest step the person approves; promoteFull tells whether
// one of their ballots asks for a full promotion.
func (p person) upTo() (int32, bool) {
	b := p.best()
	full := false
	for _, c := range p.ballots {
		full = full || c.action == ActionPromoteFull
	}
	return b.upTo, full
}

// people groups ballots by person, in the order of their first ballot.
// Logins and e-mail addresses compare ignoring case.
func people(ballots []ballot) []person {
	var out []person
	index := map[string]int{}
	for _, b := range ballots {
		k := strings.ToLower(b.by)
		if i, ok := index[k]; ok {
			out[i].ballots = append(out[i].ballots, b)
			continue
		}
		index[k] = len(out)
		out = append(out, person{ballots: []ballot{b}})
	}
	slices.SortStableFunc(out, func(a, b person) int { return a.latest().at.Compare(b.latest().at) })
	return out
}

// count decides whether the ballots approve the step the release must pass
// (target): it approves up to the furthest step k that at least the
// policy's quorum of people approve and whose required sets (those of
// every step from target to k) their members satisfy. The intent is nil
// when nothing is approved yet; the Quorum says where the target step
// stands either way.
func (o Observation) count(ballots []ballot) (*Intent, *Quorum) {
	target := o.target()
	p := o.Policy
	q := &Quorum{Step: target, Needed: p.quorum()}
	voters := people(ballots)
	approvers := func(k int32) []person {
		var out []person
		for _, v := range voters {
			if up, _ := v.upTo(); up >= k {
				out = append(out, v)
			}
		}
		return out
	}
	counted := approvers(target)
	for _, v := range counted {
		q.Approvers = append(q.Approvers, o.approverOf(v, p.requiredFor(target, target)))
	}
	q.Waiting = o.missing(counted, target, target)
	if len(q.Waiting) > 0 {
		return nil, q
	}
	k := target
	for step := o.Rollout.Steps; step > target; step-- {
		if len(o.missing(approvers(step), target, step)) == 0 {
			k = step
			break
		}
	}
	in := o.intentOf(approvers(k), k, target)
	return in, q
}

// stepKey identifies the approval of the step the release must pass (see
// target) while it is in the state it entered at PausedAt: applied once.
func (o Observation) stepKey() string {
	return fmt.Sprintf("step:%d@%s", o.target(), o.Rollout.PausedAt.UTC().Format(time.RFC3339))
}

// intentOf is the approval of steps up to k by the people who approve it.
func (o Observation) intentOf(voters []person, k, target int32) *Intent {
	in := &Intent{Action: ActionApprove, Step: k, Key: o.stepKey()}
	full := k >= o.Rollout.Steps
	var bys, vias []string
	for _, v := range voters {
		a := o.approverOf(v, o.Policy.requiredFor(target, k))
		in.Approvers = append(in.Approvers, a)
		if _, f := v.upTo(); !f {
			full = false
		}
		bys = append(bys, a.By)
		if !slices.Contains(vias, a.Via) {
			vias = append(vias, a.Via)
		}
		if a.At.After(in.At) {
			in.At = a.At
		}
		in.Commit, in.PullRequest = a.Commit, a.PullRequest
	}
	if len(voters) > 1 {
		in.Commit = "" // several: each approver has theirs
		for _, a := range in.Approvers[1:] {
			if a.PullRequest != in.Approvers[0].PullRequest {
				in.PullRequest = 0
			}
		}
	}
	if full {
		in.Action = ActionPromoteFull
	}
	in.By, in.Via = strings.Join(bys, ", "), strings.Join(vias, "+")
	return in
}

// approverOf is what is recorded of a person's approval: their latest
// ballot, with the keys of all of theirs, and the required sets (of sets)
// they count for.
func (o Observation) approverOf(v person, sets []RequiredSet) Approver {
	b := v.latest()
	a := Approver{Action: b.action, By: b.by, Via: b.via, At: b.at, Commit: b.commit, PullRequest: b.pr}
	if _, full := v.upTo(); full {
		a.Action = ActionPromoteFull
	}
	for _, c := range v.ballots {
		a.Keys = append(a.Keys, c.key)
	}
	for _, s := range sets {
		if o.inSet(v, s) {
			a.Required = append(a.Required, o.setName(s))
		}
	}
	return a
}

// missing says what the people who approve steps from..to still lack: more
// approvals, and each required set of those steps that too few of its
// members approve.
func (o Observation) missing(voters []person, from, to int32) []string {
	var out []string
	if n := o.Policy.quorum() - int32(len(voters)); n > 0 { //nolint:gosec // a handful of people
		out = append(out, fmt.Sprintf("%d more", n))
	}
	for _, s := range o.Policy.requiredFor(from, to) {
		have := int32(0)
		for _, v := range voters {
			if o.inSet(v, s) {
				have++
			}
		}
		if need := max(s.Min, 1) - have; need > 0 {
			what := "an approval"
			if need > 1 {
				what = fmt.Sprintf("%d approvals", need)
			}
			out = append(out, fmt.Sprintf("%s by %s", what, o.setDescription(s)))
		}
	}
	return out
}

func plural(n int32) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// inSet tells whether person v is a member of the required set s: one of
// its users, a member of one of its teams, or a code owner of the
// workload's path.
func (o Observation) inSet(v person, s RequiredSet) bool {
	b := v.latest()
	ids := append([]string{b.by}, b.identities...)
	for _, id := range ids {
		if containsFold(s.Users, id) {
			return true
		}
	}
	teams := o.Members[strings.ToLower(b.by)]
	for _, t := range s.Teams {
		if b.host && containsFold(teams, t) {
			return true
		}
	}
	if !s.CodeOwners {
		return false
	}
	for _, owner := range o.CodeOwners.Owners {
		if login, ok := codeowners.IsUser(owner); ok && b.host && strings.EqualFold(login, b.by) {
			return true
		}
		if team, ok := codeowners.IsTeam(owner); ok && b.host && containsFold(teams, team) {
			return true
		}
		if !b.host && containsFold(ids, owner) {
			return true
		}
	}
	return false
}

// setName names a required set: its name, or a description of its members.
func (o Observation) setName(s RequiredSet) string {
	if s.Name != "" {
		return s.Name
	}
	var members []string
	members = append(members, s.Users...)
	members = append(members, s.Teams...)
	if s.CodeOwners {
		members = append(members, "code owners")
	}
	return strings.Join(members, ", ")
}

// setDescription says who may satisfy a required set, for a message.
func (o Observation) setDescription(s RequiredSet) string {
	var members []string
	members = append(members, s.Users...)
	members = append(members, s.Teams...)
	if s.CodeOwners {
		members = append(members, o.codeOwnersDescription())
	}
	list := strings.Join(members, ", ")
	switch {
	case s.Name != "":
		return s.Name + " (" + list + ")"
	case len(members) == 1 && s.CodeOwners:
		return list
	}
	return "one of " + list
}

// codeOwnersDescription names the code owners of the workload's path, or
// why they are not known.
func (o Observation) codeOwnersDescription() string {
	c := o.CodeOwners
	path := c.Path
	if path == "" {
		path = "/"
	}
	switch {
	case c.Problem != "":
		return fmt.Sprintf("a code owner of %s (%s)", path, c.Problem)
	case len(c.Owners) == 0:
		return fmt.Sprintf("a code owner of %s (%s gives it none)", path, c.File)
	}
	return fmt.Sprintf("a code owner of %s (%s)", path, strings.Join(c.Owners, " "))
}

// expiresAt is when the first of the counted approvals expires (zero when
// none does).
func (o Observation) expiresAt(q *Quorum) time.Time {
	if o.Policy.ExpireAfter <= 0 || q == nil {
		return time.Time{}
	}
	var first time.Time
	for _, a := range q.Approvers {
		if at := a.At.Add(o.Policy.ExpireAfter); first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first
}
