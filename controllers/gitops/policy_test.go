package gitops

import (
	"slices"
	"testing"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestPolicy_namesOnlyItsLabels(t *testing.T) {
	all := Policy{ApproveLabel: "ok", PromoteFullLabel: "ship", RollbackLabel: "back", RetryLabel: "again", RejectLabel: "no"}
	some := Policy{ApproveLabel: "ok"}
	for _, tt := range []struct {
		name   string
		policy Policy
		label  string
		want   bool
	}{
		{"approve", all, "ok", true},
		{"any case", all, "OK", true},
		{"promote-full", all, "ship", true},
		{"rollback", all, "back", true},
		{"retry", all, "again", true},
		{"reject", all, "No", true},
		{"another label", all, "bug", false},
		{"no name", all, "", false},
		{"an unnamed label names nothing", some, "", false},
		{"a named one still counts", some, "ok", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.Names(tt.label); got != tt.want {
				t.Errorf("Names(%q) = %v, want %v", tt.label, got, tt.want)
			}
		})
	}
}

func TestPolicyOf_defaultsTheRejectLabel(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  string
		want string
	}{{"unset: sluice/reject", "", "sluice/reject"}, {"set: kept", "ship-it-not", "ship-it-not"}} {
		t.Run(tt.name, func(t *testing.T) {
			gg := &gitopsv1alpha1.GitGate{}
			gg.Spec.Approval.Labels.Reject = tt.set
			if got := policyOf(gg).RejectLabel; got != tt.want {
				t.Errorf("RejectLabel = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPolicy_refuseSelfApproval_letsTheAuthorReject(t *testing.T) {
	p := Policy{MinPermission: scm.PermissionWrite}
	for _, tt := range []struct {
		name   string
		action Action
		want   string
	}{
		{"approve: someone else's duty", ActionApprove, ReasonSelfApproval},
		{"promote-full: someone else's duty", ActionPromoteFull, ReasonSelfApproval},
		{"rollback (and reject, a rollback): anyone's", ActionRollback, ""},
		{"retry: anyone's", ActionRetry, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, msg := p.refuseSelfApproval("jane", tt.action, "opened pull request #42", "label"); got != tt.want {
				t.Errorf("refuseSelfApproval = %q (%s), want %q", got, msg, tt.want)
			}
		})
	}
}

func TestPolicy_teamsToAsk(t *testing.T) {
	teams := Policy{MinPermission: scm.PermissionWrite, AllowedUsers: []string{"lead"}, AllowedTeams: []string{"acme/sre", "not-a-team", "acme/dev"}}
	for _, tt := range []struct {
		name   string
		policy Policy
		user   string
		perm   scm.Permission
		want   []string
	}{
		{"no team allowed: nothing to ask", Policy{MinPermission: scm.PermissionWrite}, "ann", scm.PermissionAdmin, nil},
		{"an allowed user: nothing to ask", teams, "LEAD", scm.PermissionWrite, nil},
		{"below the minimum: refused anyway", teams, "ann", scm.PermissionRead, nil},
		{"every well-formed team, in order", teams, "ann", scm.PermissionWrite, []string{"acme/sre", "acme/dev"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.TeamsToAsk(tt.user, tt.perm); !slices.Equal(got, tt.want) {
				t.Errorf("TeamsToAsk(%q, %s) = %v, want %v", tt.user, tt.perm, got, tt.want)
			}
		})
	}
}

func TestPolicy_refuseActor(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy Policy
		label  Actor
		want   string
	}{
		{"enough permission, no list", Policy{MinPermission: scm.PermissionWrite}, Actor{Permission: scm.PermissionWrite}, ""},
		{"too little permission", Policy{MinPermission: scm.PermissionMaintain}, Actor{Permission: scm.PermissionWrite}, ReasonInsufficientPermission},
		{"not an allowed user", Policy{MinPermission: scm.PermissionWrite, AllowedUsers: []string{"lead"}}, Actor{Permission: scm.PermissionAdmin}, ReasonNotAllowed},
		{"an allowed user", Policy{MinPermission: scm.PermissionWrite, AllowedUsers: []string{"lead"}, AllowedTeams: []string{"acme/sre"}}, actor("Lead", nil), ""},
		{"a member of an allowed team", Policy{MinPermission: scm.PermissionWrite, AllowedTeams: []string{"acme/sre"}}, actor("ann", []string{"acme/sre"}), ""},
		{"in no allowed team", Policy{MinPermission: scm.PermissionWrite, AllowedTeams: []string{"acme/sre"}}, actor("ann", nil), ReasonNotAllowed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, msg := tt.policy.refuseActor(tt.label, "label"); got != tt.want {
				t.Errorf("refuseActor = %q (%s), want %q", got, msg, tt.want)
			}
		})
	}
}

func actor(by string, teams []string) Actor {
	return Actor{Login: by, Permission: scm.PermissionWrite, Teams: teams}
}
