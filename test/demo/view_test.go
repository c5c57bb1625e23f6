package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHang(t *testing.T) {
	tests := []struct {
		name        string
		first, rest string
		text        string
		width       int
		want        []string
	}{
		{name: "fits, spaces kept", first: "  ", rest: "    ", text: "a  b c", width: 10, want: []string{"  a  b c"}},
		{name: "breaks at spaces", first: "  ", rest: "    ", text: "one two three four", width: 12, want: []string{"  one two", "    three", "    four"}},
		{name: "cuts a long word", first: "", rest: "", text: "abcdefghijkl", width: 5, want: []string{"abcde"}},
		{name: "empty", first: "- ", rest: "  ", text: "", width: 5, want: []string{"- "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hang(tt.first, tt.rest, tt.text, tt.width)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("hang() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRender_staysWithinWidthAndShowsEveryPart(t *testing.T) {
	f := frame{
		Title: "Rollout demo/checkout: releasing registry.example/shop/checkout:v2",
		Phase: "Progressing", Step: 2, Steps: 3, State: "StepPaused",
		Message:   "Step 2/3 paused, waiting for approval: kubectl annotate rollout checkout sluice.dev/approve=2",
		Revisions: []revision{{Name: "v1", Pods: 5, Ready: 5, Terminating: 1}, {Name: "v2", Pods: 5, Ready: 4}},
		Workload:  "paused, maxSurge 0, maxUnavailable 2: held between batches; 9/10 available",
		Next:      []string{"A user approves with: kubectl-kruise rollout approve rollout/checkout -n demo"},
		Countdown: "The demo approves in 3s.",
	}
	for _, width := range []int{40, 80} {
		lines := render(f, width)
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: line of %d runes: %q", width, n, l)
			}
		}
		all := strings.Join(lines, "\n")
		joined := strings.Join(strings.Fields(all), " ")
		for _, want := range []string{"phase Progressing", "step 2/3 StepPaused", "v1 █████░ 5 ready of 5, 1 terminating",
			"v2 ████▒ 4 ready of 5", "held between batches", "approves in 3s"} {
			if !strings.Contains(joined, want) {
				t.Errorf("width %d: %q missing from\n%s", width, want, all)
			}
		}
	}
}

func TestStatusLine(t *testing.T) {
	tests := []struct {
		name string
		f    frame
		want string
	}{
		{name: "no rollout yet", f: frame{}, want: "-"},
		{name: "no step yet", f: frame{Phase: "Healthy", Steps: 3, Revisions: []revision{{Name: "v1", Pods: 10, Ready: 10}}}, want: "Healthy | v1 10/10 ready"},
		{
			name: "paused step",
			f:    frame{Phase: "Progressing", Step: 1, Steps: 3, State: "StepPaused", Message: "waiting", Revisions: []revision{{Name: "v1", Pods: 9, Ready: 9}, {Name: "v2", Pods: 1, Ready: 1}}},
			want: "Progressing | step 1/3 StepPaused | v1 9/9 ready | v2 1/1 ready | waiting",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := statusLine(tt.f); got != tt.want {
				t.Fatalf("statusLine() = %q, want %q", got, tt.want)
			}
		})
	}
}

// On a non-terminal, the screen writes notes as they come and a status
// line only when it changes; the countdown never shows.
func TestScreen_plainAppendsOnlyChanges(t *testing.T) {
	var out bytes.Buffer
	s := newScreen(&out, false)
	f := frame{Phase: "Healthy", Next: []string{"wait"}, Countdown: "in 3s"}
	s.draw(f)
	f.Countdown = "in 2s"
	s.draw(f)
	s.note("[  1.0s] ", "something happened")
	f.Phase = "Progressing"
	s.draw(f)
	want := "  next: wait\n  Healthy\n[  1.0s] something happened\n  Progressing\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestImageTags(t *testing.T) {
	tests := []struct{ image, tag, withV2 string }{
		{"registry.example/shop/checkout:v1", "v1", "registry.example/shop/checkout:v2"},
		{"localhost:5000/app", "localhost:5000/app", "localhost:5000/app:v2"},
		{"nginx", "nginx", "nginx:v2"},
	}
	for _, tt := range tests {
		if got := imageTag(tt.image); got != tt.tag {
			t.Errorf("imageTag(%q) = %q, want %q", tt.image, got, tt.tag)
		}
		if got := withTag(tt.image, "v2"); got != tt.withV2 {
			t.Errorf("withTag(%q) = %q, want %q", tt.image, got, tt.withV2)
		}
	}
}

func TestLinePrefixer_prefixesCompleteLines(t *testing.T) {
	var out bytes.Buffer
	p := &linePrefixer{w: &out, prefix: "> "}
	for _, chunk := range []string{"one\ntw", "o\n", "three"} {
		if _, err := p.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got := out.String(); got != "> one\n> two\n" {
		t.Fatalf("output %q", got)
	}
}
