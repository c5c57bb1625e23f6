package v1beta1

import (
	"strconv"
	"testing"
)

func TestPercent(t *testing.T) {
	tests := []struct {
		name   string
		s      string
		want   int
		wantOK bool
	}{
		{name: "whole percentage", s: "20%", want: 20, wantOK: true},
		{name: "zero", s: "0%", want: 0, wantOK: true},
		{name: "hundred", s: "100%", want: 100, wantOK: true},
		{name: "above a hundred (the field checks the range)", s: "150%", want: 150, wantOK: true},
		{name: "negative (the field checks the range)", s: "-5%", want: -5, wantOK: true},
		{name: "no percent sign", s: "20"},
		{name: "empty", s: ""},
		{name: "only the sign", s: "%"},
		{name: "leading zero", s: "05%"},
		{name: "plus sign", s: "+5%"},
		{name: "minus zero", s: "-0%"},
		{name: "space", s: " 5%"},
		{name: "fraction", s: "2.5%"},
		{name: "two signs", s: "5%%"},
		{name: "hexadecimal", s: "0x10%"},
		{name: "too large for an int", s: "99999999999999999999%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Percent(tt.s)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("Percent(%q) = %d, %v; want %d, %v", tt.s, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// FuzzPercent: whatever a user writes, Percent accepts exactly the
// strings it would write back unchanged.
func FuzzPercent(f *testing.F) {
	for _, s := range []string{"20%", "0%", "100%", "-5%", "05%", "+5%", "5%%", "", "%", "2.5%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := Percent(s)
		if ok && strconv.Itoa(n)+"%" != s {
			t.Fatalf("Percent(%q) = %d, which writes back as %q", s, n, strconv.Itoa(n)+"%")
		}
		if !ok && n != 0 {
			t.Fatalf("Percent(%q) = %d, false", s, n)
		}
	})
}
