package receiver

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/gitops/commitid"
)

func TestDecode_fieldErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name, kind, body, wantField string
	}{
		{"null body", "push", `null`, "repository"},
		{"repository of wrong type", "ping", `{"repository":"acme/app"}`, "repository"},
		{"full_name with a space", "ping", `{"repository":{"full_name":"acme/my app"}}`, "repository.full_name"},
		{"full_name with three parts", "ping", `{"repository":{"full_name":"a/b/c"}}`, "repository.full_name"},
		{"no action", "pull_request", `{"repository":{"full_name":"a/b"}}`, "action"},
		{"no pull_request", "pull_request", `{"action":"opened","repository":{"full_name":"a/b"},"sender":{"login":"x"},"number":1}`, "pull_request"},
		{"numbers disagree", "pull_request", `{"action":"opened","number":2,"repository":{"full_name":"a/b"},"sender":{"login":"x"},"pull_request":{"number":3,"head":{"sha":"` + headSHA + `"}}}`, "pull_request.number"},
		{"negative number", "pull_request", `{"action":"opened","number":-2,"repository":{"full_name":"a/b"},"sender":{"login":"x"},"pull_request":{"head":{"sha":"` + headSHA + `"}}}`, "number"},
		{"upper-case sha", "pull_request", `{"action":"opened","number":2,"repository":{"full_name":"a/b"},"sender":{"login":"x"},"pull_request":{"head":{"sha":"` + strings.ToUpper("abcdef"+headSHA[6:]) + `"}}}`, "pull_request.head.sha"},
		{"bad merge sha", "pull_request", `{"action":"closed","number":2,"repository":{"full_name":"a/b"},"sender":{"login":"x"},"pull_request":{"merged":true,"merge_commit_sha":"xyz","head":{"sha":"` + headSHA + `"}}}`, "pull_request.merge_commit_sha"},
		{"label name of wrong type", "pull_request", `{"action":"labeled","number":2,"repository":{"full_name":"a/b"},"sender":{"login":"x"},"label":{"name":5},"pull_request":{"head":{"sha":"` + headSHA + `"}}}`, "label.name"},
		{"push without sender", "push", `{"ref":"refs/heads/main","after":"` + afterSHA + `","repository":{"full_name":"a/b"}}`, "sender.login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(Kind(tt.kind), []byte(tt.body))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.wantField {
				t.Errorf("decode error = %v, want a FieldError on %s", err, tt.wantField)
			}
		})
	}
}

func TestDecode_sha256RepositoriesAndDeletedBranches(t *testing.T) {
	sha256ID := strings.Repeat("ab", 32)
	e, err := decode(KindPullRequest, []byte(`{"action":"opened","number":2,"repository":{"full_name":"a/b"},"sender":{"login":"x"},"pull_request":{"head":{"sha":"`+sha256ID+`"}}}`))
	if err != nil || e.SHA != sha256ID || e.Number != 2 {
		t.Errorf("a SHA-256 head decoded to %+v, %v", e, err)
	}
	zeros := strings.Repeat("0", 40)
	e, err = decode(KindPush, []byte(`{"ref":"refs/heads/gone","after":"`+zeros+`","deleted":true,"repository":{"full_name":"a/b"},"sender":{"login":"x"}}`))
	if err != nil || e.SHA != zeros || e.Ref != "refs/heads/gone" {
		t.Errorf("a branch deletion decoded to %+v, %v", e, err)
	}
	e, err = decode(KindPullRequest, []byte(`{"action":"closed","number":2,"repository":{"full_name":"a/b"},"sender":{"login":"x"},"pull_request":{"merged":false,"merge_commit_sha":"`+mergeSHA+`","head":{"sha":"`+headSHA+`"}}}`))
	if err != nil || e.Merged || e.MergeCommitSHA != "" {
		t.Errorf("a pull request closed without merging decoded to %+v, %v", e, err)
	}
}

// FuzzDecode feeds arbitrary payloads to the decoder: it must never panic, every error must
// name a field, and every event it accepts must carry what the Trigger relies on.
func FuzzDecode(f *testing.F) {
	f.Add("pull_request", labeledJSON("acme/app"))
	f.Add("pull_request", strings.Replace(labeledJSON("acme/app"), `"labeled"`, `"closed"`, 1))
	f.Add("pull_request", strings.Replace(labeledJSON("acme/app"), `"labeled"`, `"edited"`, 1))
	f.Add("push", `{"ref":"refs/heads/main","after":"`+afterSHA+`","repository":{"full_name":"acme/app"},"sender":{"login":"bob"}}`)
	f.Add("ping", `{"hook_id":1,"repository":{"full_name":"acme/app"}}`)
	f.Add("push", `{"ref":1}`)
	f.Add("ping", `[]`)
	f.Add("pull_request", `{"number":1e99}`)
	f.Fuzz(func(t *testing.T, kind, body string) {
		k := Kind(kind)
		if !handledKind(k) {
			k = KindPullRequest
		}
		e, err := decode(k, []byte(body))
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("decode error %v is not a FieldError naming a field", err)
			}
			return
		}
		if checkFullName(e.Repository) != nil {
			t.Fatalf("decoded repository %q is not owner/name", e.Repository)
		}
		if e.Kind != k {
			t.Fatalf("decoded kind %q from %q", e.Kind, k)
		}
		switch {
		case k == KindPush:
			if !commitid.Valid(e.SHA) || !strings.HasPrefix(e.Ref, "refs/") || e.Sender == "" {
				t.Fatalf("accepted push %+v", e)
			}
		case k == KindPullRequest && handledAction(e.Action):
			if e.Number <= 0 || !commitid.Valid(e.SHA) || e.Sender == "" {
				t.Fatalf("accepted pull request %+v", e)
			}
			if (e.Action == ActionLabeled || e.Action == ActionUnlabeled) != (e.Label != "") {
				t.Fatalf("label %q on action %q", e.Label, e.Action)
			}
			if e.MergeCommitSHA != "" && (!e.Merged || !commitid.Valid(e.MergeCommitSHA)) {
				t.Fatalf("merge commit %q on %+v", e.MergeCommitSHA, e)
			}
		}
	})
}
