// Package codeowners reads a repository's CODEOWNERS file and tells who owns a path, the way
// GitHub does: each line is a pattern and its owners, patterns follow .gitignore's rules (without
// negation and character ranges), and the last pattern that matches a path gives its owners.
//
// Owners are "@user", "@org/team" (GitLab: "@group/subgroup") or an e-mail address. A line whose
// pattern or owners do not parse is skipped and reported, as GitHub skips it. GitLab's section
// headers ("[Section]", "^[Optional]") are read as boundaries and ignored: the file is one list.
//
// Parse is pure and bounded: it reads at most MaxSize bytes and MaxRules rules.
package codeowners

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
)

// Files are where a repository keeps its CODEOWNERS, in the order they are looked for: the
// repository's root, then the places GitHub, GitHub and Gitea, and Gitea also read.
var Files = []string{"CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS", ".gitea/CODEOWNERS"}

// Bounds of what Parse reads.
const (
	// MaxSize is how many bytes of a file are read; GitHub ignores a CODEOWNERS over 3 MB.
	MaxSize = 3 << 20
	// MaxRules is how many rules a file yields at most.
	MaxRules = 10000
	// maxOwners bounds the owners of one rule.
	maxOwners = 100
)

// Rule is one line of a CODEOWNERS file.
type Rule struct {
	// Pattern as written.
	Pattern string
	// Owners as written ("@user", "@org/team", "jane@example.com"); none means the path has no
	// owner.
	Owners []string
	// Line is its line in the file, from 1.
	Line int

	segments []string // the pattern's segments, "**" for any depth
	dirOnly  bool     // the pattern ends with "/": it matches directories only
	wildLast bool     // the last segment has a wildcard (not "**"): it owns no nested path
}

// Error is a line that was skipped.
type Error struct {
	// Line is its line in the file, from 1.
	Line int
	// Problem says what is wrong.
	Problem string
}

// Error implements error.
func (e Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Problem) }

// File is a parsed CODEOWNERS file.
type File struct {
	// Rules are the valid lines, in file order.
	Rules []Rule
	// Errors are the skipped lines.
	Errors []Error
}

// Parse reads a CODEOWNERS file.
func Parse(data []byte) File {
	if len(data) > MaxSize {
		data = data[:MaxSize]
	}
	var f File
	for i, raw := range strings.Split(string(data), "\n") {
		if len(f.Rules) >= MaxRules {
			break
		}
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || strings.HasPrefix(line, "#") || section(line) {
			continue
		}
		fields := splitFields(line)
		if len(fields) == 0 {
			continue
		}
		r := Rule{Pattern: fields[0], Line: i + 1}
		owners := fields[1:]
		for j, o := range owners {
			if strings.HasPrefix(o, "#") { // an inline comment
				owners = owners[:j]
				break
			}
		}
		if len(owners) > maxOwners {
			f.Errors = append(f.Errors, Error{Line: i + 1, Problem: fmt.Sprintf("%d owners, more than %d", len(owners), maxOwners)})
			continue
		}
		if problem := r.compile(); problem != "" {
			f.Errors = append(f.Errors, Error{Line: i + 1, Problem: problem})
			continue
		}
		bad := ""
		for _, o := range owners {
			if !ValidOwner(o) {
				bad = o
				break
			}
		}
		if bad != "" {
			f.Errors = append(f.Errors, Error{Line: i + 1, Problem: fmt.Sprintf("owner %q is neither @user, @org/team nor an e-mail address", cut(bad))})
			continue
		}
		if len(owners) > 0 {
			r.Owners = owners
		}
		f.Rules = append(f.Rules, r)
	}
	return f
}

// section tells a GitLab section header ("[Section]", "^[Optional][2] @owner") from a pattern.
func section(line string) bool {
	return strings.HasPrefix(line, "[") || strings.HasPrefix(line, "^[")
}

// splitFields splits a line at unescaped blanks; "\ " keeps a blank in a pattern.
func splitFields(line string) []string {
	var (
		out []string
		b   strings.Builder
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			b.WriteByte(c)
			b.WriteByte(line[i+1])
			i++
		case c == ' ' || c == '\t':
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteByte(c)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

var (
	userOwner = regexp.MustCompile(`^@[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?(?:\[bot\])?$`)
	teamOwner = regexp.MustCompile(`^@[A-Za-z0-9][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)+$`)
)

// ValidOwner tells whether o is an owner: "@user", "@org/team" or an e-mail address.
func ValidOwner(o string) bool {
	if userOwner.MatchString(o) || teamOwner.MatchString(o) {
		return true
	}
	a, err := mail.ParseAddress(o)
	return err == nil && a.Address == o && !strings.HasPrefix(o, "@")
}

// IsTeam tells whether owner names a team ("@org/team"), and returns it without the "@".
func IsTeam(owner string) (string, bool) {
	if teamOwner.MatchString(owner) {
		return owner[1:], true
	}
	return "", false
}

// IsUser tells whether owner names a user ("@user"), and returns the login.
func IsUser(owner string) (string, bool) {
	if userOwner.MatchString(owner) {
		return owner[1:], true
	}
	return "", false
}

// compile reads the pattern; it returns why it cannot be used ("" when it can).
func (r *Rule) compile() string {
	p := r.Pattern
	switch {
	case strings.HasPrefix(p, "!"):
		return fmt.Sprintf("pattern %q: negation (!) is not supported in CODEOWNERS", cut(p))
	case strings.ContainsAny(p, "[]"):
		return fmt.Sprintf("pattern %q: character ranges ([...]) are not supported in CODEOWNERS", cut(p))
	}
	if strings.HasPrefix(p, `\#`) {
		p = p[1:]
	}
	r.dirOnly = strings.HasSuffix(p, "/")
	p = strings.TrimSuffix(p, "/")
	anchored := strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		if r.dirOnly {
			r.segments = []string{"**"} // "/": the whole repository
			return ""
		}
		return "empty pattern"
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if s == "" {
			return fmt.Sprintf("pattern %q has an empty path segment", cut(r.Pattern))
		}
	}
	if !anchored {
		segs = append([]string{"**"}, segs...)
	}
	// "**/**" is "**": collapsing them keeps matching linear in the path's depth.
	collapsed := segs[:0:0]
	for _, s := range segs {
		if s == "**" && len(collapsed) > 0 && collapsed[len(collapsed)-1] == "**" {
			continue
		}
		collapsed = append(collapsed, s)
	}
	segs = collapsed
	r.segments = segs
	last := segs[len(segs)-1]
	r.wildLast = last != "**" && strings.ContainsAny(last, "*?")
	return ""
}

// Owners returns the rule that gives the owners of path (a path inside the repository, "/" or
// "" for its root, as a GitOps tool's "./apps" or "apps/checkout.yaml"), the last one that
// matches; ok is false when none does. dir says path is a directory: a rule matches it when it
// matches the directory itself, one of its parents, or everything directly or anywhere in it
// ("apps/*", "apps/**").
func (f File) Owners(path string, dir bool) (Rule, bool) {
	segs := splitPath(path)
	for i := len(f.Rules) - 1; i >= 0; i-- {
		if f.Rules[i].matches(segs, dir) {
			return f.Rules[i], true
		}
	}
	return Rule{}, false
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
		}
	}
	return out
}

// matches tells whether the rule matches path (its segments) or one of its parents. As on
// GitHub, a pattern whose last segment has a wildcard owns only what it matches, not what is
// nested below ("docs/*" owns docs/a.md, not docs/b/c.md).
func (r Rule) matches(path []string, dir bool) bool {
	for n := len(path); n >= 1; n-- {
		parent := n < len(path)
		if r.dirOnly && !dir && !parent || parent && r.wildLast {
			continue
		}
		if match(r.segments, path[:n]) {
			return true
		}
	}
	if dir && len(r.segments) > 0 {
		last := r.segments[len(r.segments)-1]
		if (last == "*" || last == "**") && len(r.segments) > 1 && match(r.segments[:len(r.segments)-1], path) {
			return true // "apps/*", "apps/**": everything in apps
		}
	}
	return len(path) == 0 && len(r.segments) == 1 && r.segments[0] == "**"
}

// match matches pattern segments against path segments; "**" matches any number of segments.
func match(pat, path []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(path); i++ {
				if match(rest, path[i:]) {
					return true
				}
			}
			return false
		}
		if len(path) == 0 || !matchSegment(pat[0], path[0]) {
			return false
		}
		pat, path = pat[1:], path[1:]
	}
	return len(path) == 0
}

// matchSegment matches one segment: "*" any run of characters, "?" any one, "\x" x itself.
func matchSegment(pat, s string) bool {
	// Iterative wildcard matching with one backtrack point, in bytes; "?" matches one rune.
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(pat) && pat[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(pat) && pat[pi] == '?':
			pi++
			si += runeLen(s[si:])
		case pi+1 < len(pat) && pat[pi] == '\\' && pat[pi+1] == s[si]:
			pi, si = pi+2, si+1
		case pi < len(pat) && pat[pi] != '\\' && pat[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi] == '*' {
		pi++
	}
	return pi == len(pat)
}

func runeLen(s string) int {
	for i := 1; i < len(s) && i < 4; i++ {
		if s[i]&0xC0 != 0x80 {
			return i
		}
	}
	return min(len(s), 4)
}

// cut shortens s to 80 bytes at most, on a UTF-8 boundary, for a message.
func cut(s string) string {
	n := 80
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
