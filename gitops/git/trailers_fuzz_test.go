package git_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/gitops/git"
)

// FuzzParseDirectives feeds arbitrary commit messages to the trailer and
// directive parsers: they must never panic, every trailer must have a
// key without blanks or colons, and every directive must name a rollout,
// approve a step of at least 1, and print back to a trailer that parses to
// itself.
func FuzzParseDirectives(f *testing.F) {
	f.Add("Approve\n\nSluice-Approve: shop/checkout step=2")
	f.Add("Approve\n\nSluice-Approve: shop/checkout step=2 revision=1a2b3c4\nSigned-off-by: A <a@b>")
	f.Add("Roll back\n\nSluice-Rollback: shop/checkout\nSluice-Promote-Full: shop/cart revision=abc1234")
	f.Add("x\n\nSluice-Approve: shop/checkout step=1\nSluice-Approve: shop/checkout step=2")
	f.Add("x\n\nSluice-Approve:\n shop/checkout\n step=3\n# comment\n")
	f.Add("Sluice-Approve: shop/checkout step=2")
	f.Add("x\n\nsluice-approve : a/b step=99999999999")
	f.Fuzz(func(t *testing.T, message string) {
		for _, tr := range git.Trailers(message) {
			if tr.Key == "" || strings.ContainsAny(tr.Key, " \t:") {
				t.Fatalf("trailer key %q of %q", tr.Key, message)
			}
		}
		dirs, _ := git.ParseDirectives(message)
		for _, d := range dirs {
			if d.Namespace == "" || d.Name == "" {
				t.Fatalf("directive %+v names no rollout (message %q)", d, message)
			}
			if d.Action == git.ActionApprove && d.Step < 1 {
				t.Fatalf("directive %+v approves step %d (message %q)", d, d.Step, message)
			}
			again, err := git.ParseDirectives("subject\n\n" + d.String())
			if err != nil || len(again) != 1 || again[0] != d {
				t.Fatalf("directive %+v printed as %q parses to %+v, %v", d, d.String(), again, err)
			}
		}
	})
}
