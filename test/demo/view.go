package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// frame is one picture of the release: the status panel the demo draws.
type frame struct {
	// Title names what is released.
	Title string
	// Phase, Step, Steps, State and Message come from the Rollout; Step is
	// 0 until its status names one.
	Phase       string
	Step, Steps int32
	State       string
	Message     string
	// Revisions are the live pods per revision, oldest first.
	Revisions []revision
	// Workload describes the Deployment fields sluice holds.
	Workload string
	// Extra are more labelled lines after the workload's (traffic, Flux,
	// GitHub), in order.
	Extra []field
	// Next says what happens next, and what a user would do.
	Next []string
	// Countdown says when the demo acts; only the live panel shows it.
	Countdown string
}

// field is one labelled line of the panel.
type field struct {
	Label, Text string
}

// revision counts the pods of one revision.
type revision struct {
	// Name is the image tag, e.g. v1.
	Name string
	// Pods counts the pods not being deleted; Ready those of them that are
	// ready; Terminating the pods being deleted.
	Pods, Ready, Terminating int
}

// labelWidth is the width of the panel's label column.
const labelWidth = 14

// render draws f as lines no wider than width.
func render(f frame, width int) []string {
	out := []string{clip(f.Title, width)}
	add := func(label, text string) {
		out = append(out, hang(fmt.Sprintf("  %-*s", labelWidth-2, label), strings.Repeat(" ", labelWidth), text, width)...)
	}
	step := "-"
	if f.Step > 0 {
		step = fmt.Sprintf("%d/%d  %s", f.Step, f.Steps, f.State)
	}
	add("phase", orDash(f.Phase))
	add("step", step)
	barWidth := 0
	for _, r := range f.Revisions {
		barWidth = max(barWidth, r.Pods+r.Terminating)
	}
	for i, r := range f.Revisions {
		label := ""
		if i == 0 {
			label = "pods"
		}
		add(label, fmt.Sprintf("%-4s%-*s %s", r.Name, barWidth, bar(r), counts(r)))
	}
	if len(f.Revisions) == 0 {
		add("pods", "none yet")
	}
	add("deployment", orDash(f.Workload))
	for _, x := range f.Extra {
		add(x.Label, orDash(x.Text))
	}
	add("message", orDash(f.Message))
	out = append(out, "", "Next")
	for _, l := range f.Next {
		out = append(out, hang("  ", "      ", l, width)...)
	}
	if f.Countdown != "" {
		out = append(out, hang("  ", "      ", f.Countdown, width)...)
	}
	return out
}

// bar draws one cell per pod: ready, starting, terminating.
func bar(r revision) string {
	starting := max(r.Pods-r.Ready, 0)
	return strings.Repeat("█", r.Ready) + strings.Repeat("▒", starting) + strings.Repeat("░", r.Terminating)
}

// counts describes a revision's pods in words.
func counts(r revision) string {
	s := fmt.Sprintf("%d ready of %d", r.Ready, r.Pods)
	if r.Terminating > 0 {
		s += fmt.Sprintf(", %d terminating", r.Terminating)
	}
	return s
}

// statusLine is the one-line form of f for plain output.
func statusLine(f frame) string {
	parts := []string{orDash(f.Phase)}
	if f.Step > 0 {
		parts = append(parts, fmt.Sprintf("step %d/%d %s", f.Step, f.Steps, f.State))
	}
	for _, r := range f.Revisions {
		parts = append(parts, fmt.Sprintf("%s %d/%d ready", r.Name, r.Ready, r.Pods))
	}
	for _, x := range f.Extra {
		if x.Text != "" {
			parts = append(parts, x.Label+" "+x.Text)
		}
	}
	if f.Message != "" {
		parts = append(parts, f.Message)
	}
	return strings.Join(parts, " | ")
}

// hang lays text out in lines no wider than width: the first line starts
// with first, the others with rest.
func hang(first, rest, text string, width int) []string {
	lines := wrap(text, width-max(utf8.RuneCountInString(first), utf8.RuneCountInString(rest)))
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return lines
}

// wrap breaks text at spaces into lines of at most width runes; a word
// longer than a line is cut. Text that fits is returned as it is.
func wrap(text string, width int) []string {
	width = max(width, 1)
	if utf8.RuneCountInString(text) <= width {
		return []string{text}
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			lines = append(lines, clip(line, width))
			line = w
		default:
			line += " " + w
		}
	}
	return append(lines, clip(line, width))
}

// clip cuts s to width runes.
func clip(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	return string([]rune(s)[:width])
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// screen shows the demo: on a terminal, notes scroll above a status panel
// that is redrawn in place; otherwise notes and changed status lines are
// appended.
type screen struct {
	out   io.Writer
	live  bool
	width int

	drawn   int    // lines of the panel on screen
	current *frame // the panel on screen, redrawn after a note
	status  string // last status line written (plain)
	next    string // last Next block written (plain)
}

// newScreen returns a screen writing to out, live when out is a terminal
// and plain is false.
func newScreen(out io.Writer, plain bool) *screen {
	live, width := terminal(out)
	return &screen{out: out, live: live && !plain, width: width}
}

// draw shows f.
func (s *screen) draw(f frame) {
	if !s.live {
		if next := strings.Join(f.Next, "\n"); next != s.next {
			s.next = next
			for _, l := range f.Next {
				fmt.Fprintf(s.out, "  next: %s\n", l)
			}
		}
		if line := statusLine(f); line != s.status {
			s.status = line
			fmt.Fprintf(s.out, "  %s\n", line)
		}
		return
	}
	var b bytes.Buffer
	if s.current == nil {
		b.WriteString("\x1b[?25l") // hide the cursor while the panel is live
	}
	s.erase(&b)
	lines := render(f, s.width)
	b.WriteString(strings.Join(lines, "\n") + "\n")
	s.drawn, s.current = len(lines), &f
	_, _ = s.out.Write(b.Bytes())
}

// note writes prefix and text as a line that stays, above the panel on a
// terminal.
func (s *screen) note(prefix, text string) {
	if !s.live {
		fmt.Fprintln(s.out, prefix+text)
		return
	}
	var b bytes.Buffer
	s.erase(&b)
	for _, l := range hang(prefix, strings.Repeat(" ", utf8.RuneCountInString(prefix)), text, s.width) {
		b.WriteString(l + "\n")
	}
	s.drawn = 0
	_, _ = s.out.Write(b.Bytes())
	if s.current != nil {
		s.draw(*s.current)
	}
}

// erase moves the cursor to the first line of the panel and clears it.
func (s *screen) erase(b *bytes.Buffer) {
	if s.drawn > 0 {
		fmt.Fprintf(b, "\x1b[%dF\x1b[J", s.drawn)
	}
}

// close leaves the last panel on screen and shows the cursor again; later
// output goes below it.
func (s *screen) close() {
	if s.live && s.current != nil {
		fmt.Fprint(s.out, "\x1b[?25h")
	}
	s.current, s.drawn = nil, 0
}
