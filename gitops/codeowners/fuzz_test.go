package codeowners

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary CODEOWNERS files and paths to Parse and Owners: they must never
// panic, every rule must have a pattern and valid owners on a line of the file, and the rule
// Owners returns must be one of the file's rules.
func FuzzParse(f *testing.F) {
	f.Add(example, "apps/checkout", true)
	f.Add("* @a\n/apps/** @b\napps/*.yaml @acme/c #x\n", "apps/x.yaml", false)
	f.Add("[Section]\n^[Opt][2] @x\n\\#a\\ b/ jane@example.com\n!x @y\n[a] @z", "#a b", true)
	f.Add("**/**/** @a\n*?*?* @b\n", "a/b/c/d", false)
	f.Fuzz(func(t *testing.T, file, path string, dir bool) {
		cf := Parse([]byte(file))
		lines := strings.Count(file, "\n") + 1
		for _, r := range cf.Rules {
			if r.Pattern == "" || r.Line < 1 || r.Line > lines || len(r.segments) == 0 {
				t.Fatalf("rule %+v of %q", r, file)
			}
			for _, o := range r.Owners {
				if !ValidOwner(o) {
					t.Fatalf("rule %+v has owner %q", r, o)
				}
			}
		}
		if r, ok := cf.Owners(path, dir); ok {
			found := false
			for _, have := range cf.Rules {
				found = found || have.Line == r.Line
			}
			if !found {
				t.Fatalf("Owners(%q) = line %d, not a rule of the file", path, r.Line)
			}
		}
	})
}
