package command

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds arbitrary comment bodies to Parse: it must never panic,
// return more than MaxCommands lines, or a command with an unknown verb, a
// step out of range or on another verb than approve; every command must
// print back to a line that parses to itself, and every error must name a
// line of the body.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"/sluice approve",
		"/sluice approve step=3 rollout=shop/checkout",
		"LGTM\n\n/sluice promote-full\n",
		"> /sluice approve\n```\n/sluice reject\n```\n/sluice rollback rollout=cart",
		"    /sluice retry\n~~~~\n/sluice approve\n~~~\n/sluice approve",
		"/sluice\n/sluice aprove\n/sluice approve step=0 step=1",
		"/SLUICE Approve STEP=2\r\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		cmds, errs := Parse(body)
		if len(cmds)+len(errs) > MaxCommands {
			t.Fatalf("%d commands and %d errors, more than %d", len(cmds), len(errs), MaxCommands)
		}
		lines := strings.Count(body, "\n") + 1
		for _, c := range cmds {
			if !known(c.Verb) {
				t.Fatalf("command %+v has an unknown verb (body %q)", c, body)
			}
			if c.Step < 0 || c.Step > maxStep || c.Step != 0 && c.Verb != Approve {
				t.Fatalf("command %+v has step %d (body %q)", c, c.Step, body)
			}
			if c.Line < 1 || c.Line > lines {
				t.Fatalf("command %+v is on line %d of %d", c, c.Line, lines)
			}
			again, errs := Parse(c.String())
			c.Line = 1
			if len(errs) != 0 || len(again) != 1 || again[0] != c {
				t.Fatalf("command %+v printed as %q parses to %+v, %v", c, c.String(), again, errs)
			}
		}
		for _, e := range errs {
			if e.Line < 1 || e.Line > lines || e.Problem == "" || len(e.Text) > 100 {
				t.Fatalf("error %+v of body %q", e, body)
			}
			if utf8.ValidString(body) && !utf8.ValidString(e.Text) {
				t.Fatalf("error text %q of a valid UTF-8 body is not UTF-8", e.Text)
			}
		}
	})
}
