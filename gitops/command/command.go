// Package command reads the sluice commands people write in pull-request
// (merge-request) comments:
//
//	/sluice approve
//	/sluice approve step=3
//	/sluice promote-full
//	/sluice rollback
//	/sluice reject
//	/sluice retry
//
// each optionally followed by rollout=<name> or rollout=<namespace>/<name>
// to address one of the Rollouts a pull request releases. A command is a
// line of its own, anywhere in the comment; a comment may hold several.
// Lines that Markdown shows as code or as a quotation (inside a fenced
// block, indented by four spaces or a tab, or starting with ">") are not
// commands: quoting someone's "/sluice approve" in a reply, or showing the
// commands in a code block, asks for nothing.
//
// Parse is pure and bounded: it reads at most MaxBody bytes of a comment and
// returns at most MaxCommands commands.
package command

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Verb is what a command asks for.
type Verb string

// The verbs.
const (
	// Approve approves the step the release waits at (with Step, only
	// that step).
	Approve Verb = "approve"
	// PromoteFull approves every remaining step.
	PromoteFull Verb = "promote-full"
	// Rollback aborts the release: every pod and all traffic back on the
	// stable revision.
	Rollback Verb = "rollback"
	// Reject aborts the release as Rollback does, recorded as a rejection
	// of the commit.
	Reject Verb = "reject"
	// Retry releases an aborted revision again from step 1.
	Retry Verb = "retry"
)

// Verbs are the verbs in the order the documentation lists them.
var Verbs = []Verb{Approve, PromoteFull, Rollback, Reject, Retry}

// Prefix starts every command line.
const Prefix = "/sluice"

// Bounds of what Parse reads.
const (
	// MaxBody is how many bytes of a comment are read; GitHub caps a
	// comment at 65,536 characters.
	MaxBody = 64 << 10
	// MaxCommands is how many commands (and malformed command lines) one
	// comment yields at most.
	MaxCommands = 20
	// maxStep bounds step=; no release has this many steps.
	maxStep = 10000
)

// Command is one command line of a comment.
type Command struct {
	// Verb asked for.
	Verb Verb
	// Step pins an approval to one step (from 1): it approves that step
	// only while the release waits at it. 0 approves the step the release
	// waits at, whichever it is.
	Step int32
	// Rollout addresses one Rollout: "name" or "namespace/name"; "" is every
	// Rollout the pull request releases.
	Rollout string
	// Line is the command's line in the comment, from 1.
	Line int
}

// String formats c as the command line that parses back to it.
func (c Command) String() string {
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteByte(' ')
	b.WriteString(string(c.Verb))
	if c.Step != 0 {
		b.WriteString(" step=")
		b.WriteString(strconv.FormatInt(int64(c.Step), 10))
	}
	if c.Rollout != "" {
		b.WriteString(" rollout=")
		b.WriteString(c.Rollout)
	}
	return b.String()
}

// Addresses tells whether c is for the Rollout namespace/name: it names
// none, names it, or names its name alone.
func (c Command) Addresses(namespace, name string) bool {
	if c.Rollout == "" {
		return true
	}
	if ns, n, ok := strings.Cut(c.Rollout, "/"); ok {
		return ns == namespace && n == name
	}
	return c.Rollout == name
}

// Error is a line that starts with "/sluice " and is not a command.
type Error struct {
	// Line is its line in the comment, from 1.
	Line int
	// Text is the line, trimmed and cut to 100 bytes.
	Text string
	// Problem says what is wrong and how to write it.
	Problem string
}

// Error implements error.
func (e Error) Error() string {
	return fmt.Sprintf("line %d %q: %s", e.Line, e.Text, e.Problem)
}

// Parse returns the commands of a comment, in order, and the lines that
// start like a command and are malformed.
func Parse(body string) ([]Command, []Error) {
	if len(body) > MaxBody {
		body = body[:MaxBody]
	}
	var (
		cmds  []Command
		errs  []Error
		fence string // the open fence ("```" or "~~~", possibly longer); "" outside one
	)
	for i, raw := range strings.Split(body, "\n") {
		if len(cmds)+len(errs) >= MaxCommands {
			break
		}
		line := strings.TrimRight(raw, " \t\r")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		text := strings.TrimLeft(line, " ")
		if fence != "" {
			if indent < 4 && strings.HasPrefix(text, fence) && strings.Trim(text, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if indent < 4 && (strings.HasPrefix(text, "```") || strings.HasPrefix(text, "~~~")) {
			fence = text[:len(text)-len(strings.TrimLeft(text, text[:1]))]
			continue
		}
		if indent >= 4 || strings.HasPrefix(text, "\t") || strings.HasPrefix(text, ">") {
			continue // code or a quotation
		}
		rest, ok := cutPrefix(text)
		if !ok {
			continue
		}
		c, problem := parseLine(rest)
		if problem != "" {
			errs = append(errs, Error{Line: i + 1, Text: cut(text, 100), Problem: problem})
			continue
		}
		c.Line = i + 1
		cmds = append(cmds, c)
	}
	return cmds, errs
}

// cutPrefix returns what follows "/sluice" on a line that is a command
// line: "/sluice" alone, or followed by blanks. Any case of the prefix is
// accepted, as people type it.
func cutPrefix(text string) (string, bool) {
	if len(text) < len(Prefix) || !strings.EqualFold(text[:len(Prefix)], Prefix) {
		return "", false
	}
	rest := text[len(Prefix):]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false // "/sluicebot", "/sluice-x": not ours
	}
	return strings.TrimSpace(rest), true
}

// parseLine reads "<verb> [step=<n>] [rollout=<name>]"; the problem is ""
// when it parses.
func parseLine(rest string) (Command, string) {
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return Command{}, "no command given; write " + verbList()
	}
	c := Command{Verb: Verb(strings.ToLower(fields[0]))}
	if !known(c.Verb) {
		return Command{}, fmt.Sprintf("unknown command %q; write %s", cut(fields[0], 40), verbList())
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		k = strings.ToLower(k)
		if !ok || v == "" {
			return Command{}, fmt.Sprintf("%q is not key=value; %s takes %s", cut(f, 40), c.Verb, argsOf(c.Verb))
		}
		if seen[k] {
			return Command{}, fmt.Sprintf("%s is given twice", k)
		}
		seen[k] = true
		switch {
		case k == "step" && c.Verb == Approve:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxStep {
				return Command{}, fmt.Sprintf("step %q is not a step number (1 or more)", cut(v, 40))
			}
			c.Step = int32(n) //nolint:gosec // bounded by maxStep
		case k == "rollout":
			if problem := checkRollout(v); problem != "" {
				return Command{}, problem
			}
			c.Rollout = v
		default:
			return Command{}, fmt.Sprintf("unknown argument %q; %s takes %s", cut(k, 40), c.Verb, argsOf(c.Verb))
		}
	}
	return c, ""
}

// checkRollout checks a rollout= value: a Rollout's name, or its namespace
// and name.
func checkRollout(v string) string {
	ns, name, qualified := strings.Cut(v, "/")
	if !qualified {
		name = ns
	}
	if qualified && len(validation.IsDNS1123Label(ns)) > 0 {
		return fmt.Sprintf("rollout %q: %q is not a namespace name", cut(v, 80), cut(ns, 63))
	}
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return fmt.Sprintf("rollout %q: %q is not a Rollout name", cut(v, 80), cut(name, 63))
	}
	return ""
}

func known(v Verb) bool {
	for _, k := range Verbs {
		if v == k {
			return true
		}
	}
	return false
}

func argsOf(v Verb) string {
	if v == Approve {
		return "step=<n> and rollout=<name>"
	}
	return "rollout=<name>"
}

func verbList() string {
	out := make([]string, len(Verbs))
	for i, v := range Verbs {
		out[i] = Prefix + " " + string(v)
	}
	return strings.Join(out, ", ")
}

// cut shortens s to at most n bytes, on a UTF-8 boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
