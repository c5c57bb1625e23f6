package prview

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Markdown is the text of sluice's sticky comment on the pull request: the release's state,
// its steps with the current one marked, the pods and requests of each revision, who approved
// what, what was refused and why, and how to move it on. It holds no relative time ("3
// minutes ago"), so that it changes only when the release does.
func Markdown(r Release) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#### sluice · Rollout `%s` · commit `%s`\n\n", r.Rollout, short(r.Commit))
	fmt.Fprintf(&b, "%s **%s**\n", stateIcon(r.State), escape(sentence(r.Headline)))
	writeSteps(&b, r)
	writeRevisions(&b, r)
	writeQuorum(&b, r)
	writeApprovals(&b, r)
	writeRefused(&b, r)
	writeCommands(&b, r)
	b.WriteString("\n<sub>sluice edits this comment as the release moves on.</sub>\n")
	return b.String()
}

// Summary is the check run's summary: the comment's text.
func Summary(r Release) string { return Markdown(r) }

// Title is the check run's title: the headline, as a sentence.
func Title(r Release) string {
	return sentence(r.Headline)
}

// CheckRun is the check run of the release, named name (the commit status's context), with
// its buttons while they can act.
func CheckRun(r Release, name, detailsURL string) scm.CheckRun {
	run := scm.CheckRun{Name: name, ExternalID: r.Rollout, DetailsURL: detailsURL, Status: scm.CheckInProgress,
		Title: Title(r), Summary: Summary(r), Actions: Actions(r)}
	switch r.State {
	case StateSucceeded:
		run.Status, run.Conclusion = scm.CheckCompleted, scm.ConclusionSuccess
	case StateFailed:
		run.Status, run.Conclusion = scm.CheckCompleted, scm.ConclusionFailure
	case StateInProgress, StateWaiting:
	}
	return run
}

// Actions are the check run's buttons (at most three): "Approve step N" while step N waits
// for its approval, "Promote" while steps remain after the current one, and "Roll back"
// while the release is in progress; none once it ended.
func Actions(r Release) []scm.CheckAction {
	if !r.Commands.Buttons || r.State != StateInProgress && r.State != StateWaiting {
		return nil
	}
	var out []scm.CheckAction
	if r.State == StateWaiting {
		b := Button{Kind: ButtonApprovePrefix, Step: r.Step}
		desc := fmt.Sprintf("Let step %d of %d go on", r.Step, r.Steps)
		out = append(out, scm.CheckAction{Label: fmt.Sprintf("Approve step %d", r.Step), Description: desc, Identifier: b.Identifier()})
	}
	if r.Step < r.Steps {
		out = append(out, scm.CheckAction{Label: "Promote", Description: "Approve every remaining step", Identifier: ButtonPromote})
	}
	out = append(out, scm.CheckAction{Label: "Roll back", Description: "All pods and traffic back to stable", Identifier: ButtonRollback})
	return out
}

func stateIcon(s State) string {
	switch s {
	case StateWaiting:
		return "⏸️"
	case StateSucceeded:
		return "✅"
	case StateFailed:
		return "❌"
	case StateInProgress:
	}
	return "🔄"
}

// sentence is s with its first letter upper case.
func sentence(s string) string {
	if s == "" {
		return "No release in progress"
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func writeSteps(b *strings.Builder, r Release) {
	if len(r.StepList) == 0 {
		return
	}
	traffic := false
	for _, s := range r.StepList {
		traffic = traffic || s.Traffic != ""
	}
	b.WriteString("\n| | Step | Pods | ")
	if traffic {
		b.WriteString("Traffic | ")
	}
	b.WriteString("Pause |\n|:-:|:-:|---|")
	if traffic {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for i, s := range r.StepList {
		mark, n := "", fmt.Sprint(i+1)
		switch s.Mark {
		case MarkDone:
			mark = "✓"
		case MarkCurrent, MarkPaused:
			mark, n = "▶", "**"+n+"**"
		case MarkAborted:
			mark = "✗"
		}
		fmt.Fprintf(b, "| %s | %s | %s | ", mark, n, s.Replicas)
		if traffic {
			fmt.Fprintf(b, "%s | ", orDash(s.Traffic))
		}
		fmt.Fprintf(b, "%s |\n", s.Pause)
	}
}

func writeRevisions(b *strings.Builder, r Release) {
	if len(r.Revisions) == 0 {
		return
	}
	b.WriteString("\n| Revision | Pods | Requests |\n|---|---|---|\n")
	for _, rev := range r.Revisions {
		share := "-"
		if rev.Percent >= 0 {
			share = fmt.Sprintf("%d%%", rev.Percent)
		}
		fmt.Fprintf(b, "| `%s` %s | %d | %s |\n", short(rev.Name), rev.Role, rev.Pods, share)
	}
	if r.TrafficNote != "" {
		fmt.Fprintf(b, "\n<sub>%s</sub>\n", r.TrafficNote)
	}
}

// writeQuorum itemises the approvals toward the quorum of the step the release waits at, and
// what it still waits for: "**Step 2 needs 2 approvals:** alice (label, 10:02 UTC), bob
// (`/sluice approve`, 10:05 UTC)". It says nothing for the default policy's wait for one
// approval, which the headline tells already.
func writeQuorum(b *strings.Builder, r Release) {
	q := r.Quorum
	if q == nil || q.Needed <= 1 && len(q.Approvals) == 0 && (len(q.Waiting) == 0 || len(q.Waiting) == 1 && q.Waiting[0] == "1 more") {
		return
	}
	items := make([]string, 0, len(q.Approvals))
	clock := clockOf(q.Approvals)
	for _, a := range q.Approvals {
		how := []string{howApproved(a, r), clock(a.At)}
		if len(a.Required) > 0 {
			how = append(how, "for "+escape(strings.Join(a.Required, ", ")))
		}
		items = append(items, fmt.Sprintf("%s (%s)", escape(a.By), strings.Join(how, ", ")))
	}
	given := "none yet"
	if len(items) > 0 {
		given = strings.Join(items, ", ")
	}
	fmt.Fprintf(b, "\n**Step %d needs %d approval%s:** %s.\n", q.Step, q.Needed, pluralS(int(q.Needed)), given)
	if len(q.Waiting) > 0 {
		waiting := make([]string, 0, len(q.Waiting))
		for _, w := range q.Waiting {
			waiting = append(waiting, escape(oneLine(w)))
		}
		fmt.Fprintf(b, "\nStill waiting for %s.\n", strings.Join(waiting, " and "))
	}
}

// howApproved says how an approval was given, for people: "label", "`/sluice approve`",
// "review", "button", "trailer in `1a2b3c4d5e6f`", and on which pull request when it is not
// the one the text is shown on.
func howApproved(a GivenApproval, r Release) string {
	promote := a.Action == "PromoteFull"
	how := escape(a.Via)
	switch {
	case strings.HasSuffix(a.Via, "-label") && promote:
		how = "label " + code(r.Commands.PromoteFull)
	case strings.HasSuffix(a.Via, "-label"):
		how = "label"
	case strings.HasSuffix(a.Via, "-comment") && promote:
		how = "`/sluice promote-full`"
	case strings.HasSuffix(a.Via, "-comment"):
		how = "`/sluice approve`"
	case a.Via == "gitlab-review":
		how = "merge request approval"
	case strings.HasSuffix(a.Via, "-review"):
		how = "review"
	case strings.HasSuffix(a.Via, "-check-run"):
		how = "button"
	case a.Via == "git-trailer":
		how = "trailer in " + code(short(a.Commit))
	case a.Via == "git":
		how = "commit " + code(short(a.Commit))
	}
	if a.PullRequest > 0 && a.PullRequest != r.PullRequest {
		how += fmt.Sprintf(" on #%d", a.PullRequest)
	}
	return how
}

// clockOf returns how the times of approvals are shown: the time of day in UTC when they all
// fall on one day, with the date otherwise.
func clockOf(list []GivenApproval) func(time.Time) string {
	layout := "15:04 UTC"
	for _, a := range list {
		if y, m, d := a.At.UTC().Date(); !sameDay(list[0].At, y, m, d) {
			layout = "Jan 2 15:04 UTC"
		}
	}
	return func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(layout)
	}
}

func sameDay(t time.Time, y int, m time.Month, d int) bool {
	ty, tm, td := t.UTC().Date()
	return ty == y && tm == m && td == d
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func writeApprovals(b *strings.Builder, r Release) {
	if len(r.Approvals) == 0 {
		return
	}
	b.WriteString("\n**Decisions**\n\n")
	for _, a := range r.Approvals {
		var what string
		switch {
		case a.Action == "Approve":
			what = fmt.Sprintf("step %d approved", a.Step)
		case a.Action == "PromoteFull":
			what = "every remaining step approved"
		case a.Action == "Rollback" && a.Rejected:
			what = "rejected"
		case a.Action == "Rollback":
			what = "rolled back"
		case a.Action == "Retry":
			what = "released again from step 1"
		default:
			what = a.Action
		}
		fmt.Fprintf(b, "- %s by **%s** via %s, %s\n", what, escape(a.By), escape(a.Via), stamp(a.At))
	}
}

func writeRefused(b *strings.Builder, r Release) {
	if len(r.Refused) == 0 {
		return
	}
	b.WriteString("\n**Refused**\n\n")
	for _, f := range r.Refused {
		fmt.Fprintf(b, "- %s: %s\n", escape(f.Reason), escape(oneLine(f.Message)))
	}
}

// command is one way to move the release on, and how to give it.
type command struct {
	what, label, comment, button string
}

// commands are the ways to move the release on in its state.
func commands(r Release) []command {
	c := r.Commands
	comment := func(s string) string {
		if !c.Comments {
			return ""
		}
		return s
	}
	button := func(s string) string {
		if !c.Buttons {
			return ""
		}
		return s
	}
	var out []command
	switch r.State {
	case StateWaiting, StateInProgress:
		if r.State == StateWaiting {
			out = append(out, command{fmt.Sprintf("Approve step %d", r.Step), c.Approve, comment("/sluice approve"), button(fmt.Sprintf("Approve step %d", r.Step))})
		}
		if r.Step < r.Steps {
			out = append(out, command{"Approve every remaining step", c.PromoteFull, comment("/sluice promote-full"), button("Promote")})
		}
		out = append(out,
			command{"Roll back (every pod and all traffic to the stable revision)", c.Rollback, comment("/sluice rollback"), button("Roll back")},
			command{"Reject the commit (a rollback that says so)", c.Reject, comment("/sluice reject"), ""})
	case StateFailed:
		if r.Aborted {
			out = append(out, command{"Release it again from step 1", c.Retry, "", ""})
		}
	case StateSucceeded:
	}
	var kept []command
	for _, cmd := range out {
		if cmd.label != "" || cmd.comment != "" || cmd.button != "" {
			kept = append(kept, cmd)
		}
	}
	return kept
}

func writeCommands(b *strings.Builder, r Release) {
	list := commands(r)
	if len(list) == 0 {
		if r.State == StateFailed {
			b.WriteString("\nRevert the commit in Git, or push a new one, to release again.\n")
		}
		return
	}
	header := []string{"", "Label"}
	if r.Commands.Comments {
		header = append(header, "Comment")
	}
	if r.Commands.Buttons {
		header = append(header, "Check run")
	}
	b.WriteString("\n**To move it on**\n\n")
	writeRow(b, header)
	writeRow(b, slices.Repeat([]string{"---"}, len(header)))
	for _, c := range list {
		row := []string{c.what, code(c.label)}
		if r.Commands.Comments {
			row = append(row, code(c.comment))
		}
		if r.Commands.Buttons {
			button := "-"
			if c.button != "" {
				button = "**" + c.button + "**"
			}
			row = append(row, button)
		}
		writeRow(b, row)
	}
}

// writeRow writes one row of a Markdown table.
func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

func code(s string) string {
	if s == "" {
		return "-"
	}
	return "`" + s + "`"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// markdownEscapes make text from outside (logins, label names, commit messages quoted in a
// refusal) show as written: no link, emphasis, heading, table cell or HTML of its own, and no
// @-mention that would notify someone on every edit (a zero-width space follows the @).
var markdownEscapes = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", "&lt;", ">", "&gt;",
	"#", `\#`, "|", `\|`, "~", `\~`, "@", "@\u200b", "&", "&amp;",
)

func escape(s string) string { return markdownEscapes.Replace(s) }

// oneLine keeps a message on one line of a Markdown list.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
