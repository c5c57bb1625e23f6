package scm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestPermission_AtLeast(t *testing.T) {
	tests := []struct {
		name       string
		p, minimum Permission
		want       bool
	}{
		{name: "admin covers write", p: PermissionAdmin, minimum: PermissionWrite, want: true},
		{name: "maintain covers triage", p: PermissionMaintain, minimum: PermissionTriage, want: true},
		{name: "write covers write", p: PermissionWrite, minimum: PermissionWrite, want: true},
		{name: "triage below write", p: PermissionTriage, minimum: PermissionWrite, want: false},
		{name: "read below triage", p: PermissionRead, minimum: PermissionTriage, want: false},
		{name: "none below read", p: PermissionNone, minimum: PermissionRead, want: false},
		{name: "none covers none", p: PermissionNone, minimum: PermissionNone, want: true},
		{name: "unknown grants nothing", p: Permission("owner"), minimum: PermissionNone, want: false},
		{name: "unknown minimum is never met", p: PermissionAdmin, minimum: Permission(""), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.AtLeast(tt.minimum); got != tt.want {
				t.Errorf("%q.AtLeast(%q) = %v, want %v", tt.p, tt.minimum, got, tt.want)
			}
		})
	}
}

func TestParsePermission(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Permission
		wantErr bool
	}{
		{name: "maintain", in: "maintain", want: PermissionMaintain},
		{name: "upper case", in: "ADMIN", want: PermissionAdmin},
		{name: "legacy push", in: "push", want: PermissionWrite},
		{name: "legacy pull", in: "pull", want: PermissionRead},
		{name: "none", in: "none", want: PermissionNone},
		{name: "unknown", in: "owner", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePermission(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParsePermission(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParsePermission(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCommitStatus_Validate(t *testing.T) {
	long := strings.Repeat("é", 150)
	tests := []struct {
		name     string
		in       CommitStatus
		wantDesc string
		wantErr  bool
	}{
		{name: "pending kept", in: CommitStatus{Context: "sluice/ns/app", State: StatePending, Description: "step 2/4 paused"}, wantDesc: "step 2/4 paused"},
		{name: "long description cut to 140 runes", in: CommitStatus{Context: "c", State: StateSuccess, Description: long}, wantDesc: strings.Repeat("é", 139) + "…"},
		{name: "exactly 140 kept", in: CommitStatus{Context: "c", State: StateFailure, Description: strings.Repeat("x", 140)}, wantDesc: strings.Repeat("x", 140)},
		{name: "unknown state", in: CommitStatus{Context: "c", State: "done"}, wantErr: true},
		{name: "empty context", in: CommitStatus{Context: " ", State: StateError}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got.Description != tt.wantDesc {
				t.Errorf("Description = %q, want %q", got.Description, tt.wantDesc)
			}
		})
	}
}

func TestCommitStatus_Same(t *testing.T) {
	base := CommitStatus{Context: "sluice/ns/app", State: StatePending, Description: "d", TargetURL: "u"}
	tests := []struct {
		name string
		o    CommitStatus
		want bool
	}{
		{name: "identical", o: base, want: true},
		{name: "context case differs", o: CommitStatus{Context: "Sluice/NS/app", State: StatePending, Description: "d", TargetURL: "u"}, want: true},
		{name: "state differs", o: CommitStatus{Context: base.Context, State: StateSuccess, Description: "d", TargetURL: "u"}, want: false},
		{name: "description differs", o: CommitStatus{Context: base.Context, State: StatePending, Description: "e", TargetURL: "u"}, want: false},
		{name: "target differs", o: CommitStatus{Context: base.Context, State: StatePending, Description: "d"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := base.Same(tt.o); got != tt.want {
				t.Errorf("Same() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestErrors_classify(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rl := fmt.Errorf("posting: %w", &RateLimitError{RetryAt: at, Secondary: true, Message: "slow down"})
	if got, ok := RetryAt(rl); !ok || !got.Equal(at) {
		t.Errorf("RetryAt(rate limit) = %v, %v; want %v, true", got, ok, at)
	}
	if !strings.Contains(rl.Error(), "secondary rate limit: retry at 2030-01-02T03:04:05Z: slow down") {
		t.Errorf("message = %q", rl.Error())
	}
	if _, ok := RetryAt(errors.New("other")); ok {
		t.Error("RetryAt(other) reported a retry time")
	}
	if !IsNotFound(fmt.Errorf("x: %w", &NotFoundError{What: "pull request 3"})) || IsNotFound(rl) {
		t.Error("IsNotFound misclassifies")
	}
	if !IsUnauthorized(fmt.Errorf("x: %w", &UnauthorizedError{StatusCode: 401})) || IsUnauthorized(rl) {
		t.Error("IsUnauthorized misclassifies")
	}
}

func TestConflictError_saysWhenTheHostNamesNoPaths(t *testing.T) {
	if got := (&ConflictError{}).Error(); got != "revert conflicts with later changes on the base" {
		t.Fatalf("no paths: %q", got)
	}
	if got := (&ConflictError{Paths: []string{"a", "b"}}).Error(); got != "revert conflicts on 2 path(s): [a b]" {
		t.Fatalf("two paths: %q", got)
	}
}
