package codeowners

import (
	"reflect"
	"strings"
	"testing"
)

// example is GitHub's documented example, trimmed, with a few lines of our own.
const example = `# Lines starting with '#' are comments.
# These owners will be the default owners for everything in the repo.
*       @global-owner1 @global-owner2

# Order is important; the last matching pattern takes the most precedence.
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
/apps/checkout/ @acme/payments @alice
/apps/legacy/**  @acme/legacy
`

func TestOwners(t *testing.T) {
	f := Parse([]byte(example))
	if len(f.Errors) != 0 {
		t.Fatalf("errors: %v", f.Errors)
	}
	for _, tt := range []struct {
		path   string
		dir    bool
		want   []string // nil: the last matching rule has no owners
		wantOK bool
	}{
		{"README.md", false, []string{"@global-owner1", "@global-owner2"}, true},
		{"web/app.js", false, []string{"@js-owner"}, true},
		{"main.go", false, []string{"docs@example.com"}, true},
		{"notes/a.txt", false, []string{"@octo-org/octocats"}, true},
		{"build/logs/today.log", false, []string{"@octocat"}, true}, // **/logs is later than /build/logs/
		{"docs/getting-started.md", false, []string{"@doctocat"}, true},
		{"scripts/deploy.sh", false, []string{"@doctocat", "@octocat"}, true},
		{"deep/logs/x", false, []string{"@octocat"}, true},
		{"apps", true, []string{"@octocat"}, true},
		{"./apps/", true, []string{"@octocat"}, true},
		{"apps/github", true, nil, true}, // explicitly without owners
		{"apps/checkout", true, []string{"@acme/payments", "@alice"}, true},
		{"apps/checkout/prod", true, []string{"@acme/payments", "@alice"}, true},
		{"apps/checkout/deployment.yaml", false, []string{"@acme/payments", "@alice"}, true},
		{"apps/legacy", true, []string{"@acme/legacy"}, true},
		{"apps/legacy/v1/app.yaml", false, []string{"@acme/legacy"}, true},
		{"", true, []string{"@global-owner1", "@global-owner2"}, true},
	} {
		t.Run(tt.path, func(t *testing.T) {
			r, ok := f.Owners(tt.path, tt.dir)
			if ok != tt.wantOK || !reflect.DeepEqual(r.Owners, tt.want) {
				t.Errorf("Owners(%q) = %v (line %d), %v; want %v", tt.path, r.Owners, r.Line, ok, tt.want)
			}
		})
	}
}

func TestOwners_githubRules(t *testing.T) {
	for _, tt := range []struct {
		name    string
		file    string
		path    string
		dir     bool
		want    bool
		wantErr string
	}{
		{name: "docs/* owns a file directly inside", file: "docs/* @a", path: "docs/x.md", want: true},
		{name: "docs/* does not own a nested file", file: "docs/* @a", path: "docs/b/x.md"},
		{name: "docs/* owns the directory's files, so the directory", file: "docs/* @a", path: "docs", dir: true, want: true},
		{name: "a pattern with a slash is anchored", file: "apps/x @a", path: "team/apps/x"},
		{name: "one without is not", file: "x.yaml @a", path: "team/apps/x.yaml", want: true},
		{name: "a directory pattern does not match a file", file: "apps/ @a", path: "apps", want: false},
		{name: "but the directory", file: "apps/ @a", path: "apps", dir: true, want: true},
		{name: "? is one character", file: "app?.yaml @a", path: "app1.yaml", want: true},
		{name: "? is not two", file: "app?.yaml @a", path: "app12.yaml"},
		{name: "** in the middle", file: "apps/**/prod @a", path: "apps/a/b/prod/x.yaml", want: true},
		{name: "an escaped # starts a pattern", file: `\#notes @a`, path: "#notes", want: true},
		{name: "an escaped blank", file: `my\ app/ @a`, path: "my app", dir: true, want: true},
		{name: "negation is an error", file: "!apps/ @a", path: "apps", dir: true, wantErr: "negation"},
		{name: "ranges are an error", file: "app[12].yaml @a", path: "app1.yaml", wantErr: "character ranges"},
		{name: "a bad owner skips the line", file: "* @a\napps/ not-an-owner", path: "apps", dir: true, want: true, wantErr: `owner "not-an-owner"`},
		{name: "GitLab sections are boundaries", file: "[Platform]\napps/ @a\n^[Docs][2] @b\ndocs/ @c", path: "apps", dir: true, want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := Parse([]byte(tt.file))
			_, got := f.Owners(tt.path, tt.dir)
			if got != tt.want {
				t.Errorf("owned = %v, want %v (rules %+v)", got, tt.want, f.Rules)
			}
			var errs []string
			for _, e := range f.Errors {
				errs = append(errs, e.Error())
			}
			if tt.wantErr == "" && len(errs) > 0 || tt.wantErr != "" && !strings.Contains(strings.Join(errs, "; "), tt.wantErr) {
				t.Errorf("errors = %v, want %q", errs, tt.wantErr)
			}
		})
	}
}

func TestOwnerKinds(t *testing.T) {
	for _, tt := range []struct {
		owner      string
		valid      bool
		user, team string
	}{
		{"@alice", true, "alice", ""},
		{"@renovate[bot]", true, "renovate[bot]", ""},
		{"@acme/sre", true, "", "acme/sre"},
		{"@acme/platform/release", true, "", "acme/platform/release"},
		{"jane@example.com", true, "", ""},
		{"@", false, "", ""},
		{"alice", false, "", ""},
		{"@al ice", false, "", ""},
		{"Jane <jane@example.com>", false, "", ""},
	} {
		if got := ValidOwner(tt.owner); got != tt.valid {
			t.Errorf("ValidOwner(%q) = %v, want %v", tt.owner, got, tt.valid)
		}
		if u, ok := IsUser(tt.owner); ok != (tt.user != "") || u != tt.user && ok {
			t.Errorf("IsUser(%q) = %q, %v", tt.owner, u, ok)
		}
		if team, ok := IsTeam(tt.owner); ok != (tt.team != "") || team != tt.team && ok {
			t.Errorf("IsTeam(%q) = %q, %v", tt.owner, team, ok)
		}
	}
}
