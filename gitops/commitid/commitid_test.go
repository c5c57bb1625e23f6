package commitid

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"SHA-1", strings.Repeat("0123456789", 4), true},
		{"SHA-256", strings.Repeat("ab", 32), true},
		{"empty", "", false},
		{"abbreviated", "1234567", false},
		{"41 digits", strings.Repeat("a", 41), false},
		{"upper case", strings.Repeat("AB", 20), false},
		{"not hex", strings.Repeat("g", 40), false},
		{"multi-byte runes of 40 bytes", strings.Repeat("é", 20), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Valid(tt.in); got != tt.want {
				t.Errorf("Valid(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		strings.Repeat("0123456789", 4): "012345678901",
		"0123456789ab":                  "0123456789ab",
		"abc":                           "abc",
		"":                              "",
	} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}
