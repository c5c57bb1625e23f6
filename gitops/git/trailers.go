package git

import (
	"strings"
)

// Trailer is one "Key: value" line of a commit message's trailer block.
type Trailer struct {
	// Key as written (compare it case-insensitively, as git does).
	Key string
	// Value with surrounding blanks removed and continuation lines joined
	// by single spaces.
	Value string
}

// commentChar starts a comment line, as git's core.commentChar default.
const commentChar = "#"

// Trailers returns the trailers of a commit message, following the rules
// of git interpret-trailers (git 2.39) with no trailer configured, so
// `git interpret-trailers --parse --no-divider` finds the same ones:
//
//   - The trailer block is the last paragraph of the message, once trailing
//     empty and comment (#) lines are set aside. The first paragraph (the
//     subject) is never a trailer block.
//   - A trailer line is "Key: value" or "Key:value": the key is letters,
//     digits and '-', optionally followed by blanks before the colon. A line
//     starting with a blank continues the trailer above it.
//   - The paragraph is a trailer block when all its lines are trailers, or
//     when at least a quarter are and one of them is a line git generates
//     (Signed-off-by, cherry-picked-from). Other lines in such a block are
//     skipped.
func Trailers(message string) []Trailer {
	lines := strings.Split(message, "\n")
	lines = lines[:ignoredTail(lines)]
	start := trailerBlockStart(lines)
	if start < 0 {
		return nil
	}
	// Group continuation lines with the trailer line above them.
	var raw []string
	last := -1
	for _, line := range lines[start:] {
		if last >= 0 && line != "" && isSpace(line[0]) {
			raw[last] += "\n" + line
			continue
		}
		raw = append(raw, line)
		last = -1
		if separatorIndex(line) >= 1 {
			last = len(raw) - 1
		}
	}
	var out []Trailer
	for _, t := range raw {
		if strings.HasPrefix(t, commentChar) {
			continue
		}
		sep := separatorIndex(t)
		if sep < 1 {
			continue
		}
		out = append(out, Trailer{
			Key:   trimSpace(t[:sep]),
			Value: unfold(trimSpace(t[sep+1:])),
		})
	}
	return out
}

// ignoredTail returns how many leading lines remain once the trailing run
// of empty lines, comment lines and old "Conflicts:" blocks is set aside, as
// git's ignored_log_message_bytes.
func ignoredTail(lines []string) int {
	boc := -1
	inConflicts := false
	for i, l := range lines {
		switch {
		case l == "" || strings.HasPrefix(l, commentChar):
			if boc < 0 {
				boc = i
			}
		case l == "Conflicts:":
			inConflicts = true
			if boc < 0 {
				boc = i
			}
		case inConflicts && strings.HasPrefix(l, "\t"):
		case boc >= 0:
			boc = -1
			inConflicts = false
		}
	}
	if boc < 0 {
		return len(lines)
	}
	return boc
}

// unfold joins continuation lines: a newline and the blanks after it
// become one space.
func unfold(v string) string {
	if !strings.Contains(v, "\n") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\n' {
			b.WriteByte(v[i])
			continue
		}
		for i+1 < len(v) && isSpace(v[i+1]) {
			i++
		}
		b.WriteByte(' ')
	}
	return trimSpace(b.String())
}

// trimSpace trims what C's isspace calls blank, as git's strbuf_trim.
func trimSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
}

// trailerBlockStart returns the index of the first line of the trailer
// block in lines (which end with the block's last line), or -1 when there is
// none. It reads the last paragraph bottom up, as git's
// find_trailer_block_start does.
func trailerBlockStart(lines []string) int {
	// The first paragraph is the subject: find the blank line after it.
	endOfTitle := len(lines)
	for i, l := range lines {
		if strings.HasPrefix(l, commentChar) {
			continue
		}
		if isBlank(l) {
			endOfTitle = i
			break
		}
	}
	var trailerLines, nonTrailerLines, continuationLines int
	recognized := false
	onlySpaces := true
	for i := len(lines) - 1; i >= endOfTitle; i-- {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, commentChar):
			nonTrailerLines += continuationLines
			continuationLines = 0
		case isBlank(l):
			if onlySpaces {
				continue
			}
			nonTrailerLines += continuationLines
			if recognized && trailerLines*3 >= nonTrailerLines {
				return i + 1
			}
			if trailerLines > 0 && nonTrailerLines == 0 {
				return i + 1
			}
			return -1
		default:
			onlySpaces = false
			if isGitGenerated(l) {
				trailerLines++
				continuationLines = 0
				recognized = true
				continue
			}
			switch {
			case separatorIndex(l) >= 1 && !isSpace(l[0]):
				trailerLines++
				continuationLines = 0
			case isSpace(l[0]):
				continuationLines++
			default:
				nonTrailerLines++
				nonTrailerLines += continuationLines
				continuationLines = 0
			}
		}
	}
	return -1
}

// separatorIndex returns the index of the ':' that ends a trailer key at
// the start of line, or -1: the key is letters, digits and '-', then
// optional blanks, as git's find_separator.
func separatorIndex(line string) int {
	whitespace := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == ':' {
			return i
		}
		if !whitespace && (isAlnum(c) || c == '-') {
			continue
		}
		if i != 0 && (c == ' ' || c == '\t') {
			whitespace = true
			continue
		}
		break
	}
	return -1
}

// isGitGenerated reports whether line is one git writes into trailer
// blocks itself (sign-off, cherry-pick note): a block holding one may also
// hold other lines.
func isGitGenerated(line string) bool {
	return strings.HasPrefix(line, "Signed-off-by: ") || strings.HasPrefix(line, "(cherry picked from commit ")
}

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			return false
		}
	}
	return true
}

// isSpace is C's isspace in the C locale, which git uses.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
