package command

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		want     []Command
		wantErrs []string // a part of each error's problem, in order
	}{
		{name: "approve", body: "/sluice approve", want: []Command{{Verb: Approve, Line: 1}}},
		{name: "approve a step", body: "/sluice approve step=3", want: []Command{{Verb: Approve, Step: 3, Line: 1}}},
		{name: "promote-full", body: "/sluice promote-full", want: []Command{{Verb: PromoteFull, Line: 1}}},
		{name: "rollback", body: "/sluice rollback", want: []Command{{Verb: Rollback, Line: 1}}},
		{name: "reject", body: "/sluice reject", want: []Command{{Verb: Reject, Line: 1}}},
		{name: "retry", body: "/sluice retry", want: []Command{{Verb: Retry, Line: 1}}},
		{name: "one Rollout by name", body: "/sluice approve rollout=checkout", want: []Command{{Verb: Approve, Rollout: "checkout", Line: 1}}},
		{name: "one Rollout by namespace and name, with a step", body: "/sluice approve rollout=shop/checkout step=2",
			want: []Command{{Verb: Approve, Step: 2, Rollout: "shop/checkout", Line: 1}}},
		{name: "anywhere in a comment, one per line", body: "Looks good to me.\n\n/sluice approve\nThanks!\r\n/sluice reject rollout=cart\n",
			want: []Command{{Verb: Approve, Line: 3}, {Verb: Reject, Rollout: "cart", Line: 5}}},
		{name: "any case, blanks around", body: "  /Sluice   APPROVE   Step=2  \t", want: []Command{{Verb: Approve, Step: 2, Line: 1}}},
		{name: "CRLF line ends", body: "hi\r\n/sluice rollback\r\n", want: []Command{{Verb: Rollback, Line: 2}}},
		{name: "not at the start of a line", body: "please /sluice approve"},
		{name: "inline code", body: "`/sluice approve`"},
		{name: "quoted in a reply", body: "> /sluice approve\n\nI disagree."},
		{name: "in a fenced code block", body: "Commands:\n```\n/sluice approve\n/sluice rollback\n```\n"},
		{name: "in a tilde fence with an info string", body: "~~~text\n/sluice approve\n~~~"},
		{name: "after a fence closes", body: "```\n/sluice reject\n```\n/sluice approve", want: []Command{{Verb: Approve, Line: 4}}},
		{name: "a shorter fence does not close a longer one", body: "````\n```\n/sluice approve\n````\n/sluice rollback",
			want: []Command{{Verb: Rollback, Line: 5}}},
		{name: "an unclosed fence runs to the end", body: "```\n/sluice approve"},
		{name: "indented code", body: "    /sluice approve\n\t/sluice approve"},
		{name: "three spaces are not code", body: "   /sluice approve", want: []Command{{Verb: Approve, Line: 1}}},
		{name: "another word starting with the prefix", body: "/sluicebot approve\n/sluice-approve"},
		{name: "no verb", body: "/sluice", wantErrs: []string{"no command given; write /sluice approve, /sluice promote-full"}},
		{name: "unknown verb", body: "/sluice lgtm", wantErrs: []string{`unknown command "lgtm"`}},
		{name: "extra words", body: "/sluice approve LGTM", wantErrs: []string{`"LGTM" is not key=value; approve takes step=<n> and rollout=<name>`}},
		{name: "step zero", body: "/sluice approve step=0", wantErrs: []string{`step "0" is not a step number`}},
		{name: "step not a number", body: "/sluice approve step=two", wantErrs: []string{`step "two" is not a step number`}},
		{name: "step too large", body: "/sluice approve step=99999999999", wantErrs: []string{"is not a step number"}},
		{name: "step given twice", body: "/sluice approve step=1 step=2", wantErrs: []string{"step is given twice"}},
		{name: "step is for approve only", body: "/sluice rollback step=2", wantErrs: []string{`unknown argument "step"; rollback takes rollout=<name>`}},
		{name: "empty value", body: "/sluice approve step=", wantErrs: []string{"is not key=value"}},
		{name: "a rollout name that is not one", body: "/sluice approve rollout=Check_Out", wantErrs: []string{`"Check_Out" is not a Rollout name`}},
		{name: "a namespace that is not one", body: "/sluice approve rollout=a.b/c", wantErrs: []string{`"a.b" is not a namespace name`}},
		{name: "good and bad lines together", body: "/sluice approve\n/sluice aprove", want: []Command{{Verb: Approve, Line: 1}},
			wantErrs: []string{`unknown command "aprove"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := Parse(tt.body)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("commands = %+v, want %+v", got, tt.want)
			}
			if len(errs) != len(tt.wantErrs) {
				t.Fatalf("errors = %v, want %d containing %q", errs, len(tt.wantErrs), tt.wantErrs)
			}
			for i, e := range errs {
				if !strings.Contains(e.Problem, tt.wantErrs[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, e.Problem, tt.wantErrs[i])
				}
			}
		})
	}
}

func TestParse_bounded(t *testing.T) {
	body := strings.Repeat("/sluice approve\n", 100)
	if got, _ := Parse(body); len(got) != MaxCommands {
		t.Errorf("%d commands from 100 lines, want at most %d", len(got), MaxCommands)
	}
	long := strings.Repeat("x", MaxBody) + "\n/sluice approve"
	if got, _ := Parse(long); len(got) != 0 {
		t.Errorf("a command past %d bytes was read: %+v", MaxBody, got)
	}
}

func TestCommand_Addresses(t *testing.T) {
	for _, tt := range []struct {
		rollout string
		want    bool
	}{
		{"", true},
		{"checkout", true},
		{"shop/checkout", true},
		{"cart", false},
		{"other/checkout", false},
	} {
		if got := (Command{Verb: Approve, Rollout: tt.rollout}).Addresses("shop", "checkout"); got != tt.want {
			t.Errorf("rollout=%q addresses shop/checkout = %v, want %v", tt.rollout, got, tt.want)
		}
	}
}

func TestCommand_String_parsesBack(t *testing.T) {
	for _, c := range []Command{
		{Verb: Approve}, {Verb: Approve, Step: 4}, {Verb: PromoteFull, Rollout: "shop/checkout"}, {Verb: Retry, Rollout: "cart"},
	} {
		got, errs := Parse(c.String())
		c.Line = 1
		if len(errs) != 0 || len(got) != 1 || got[0] != c {
			t.Errorf("%q parses to %+v, %v; want %+v", c.String(), got, errs, c)
		}
	}
}
