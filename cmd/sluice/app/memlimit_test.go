package app

import "testing"

func TestMemoryLimitOf(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"max\n", 0, false},
		{"536870912\n", 483183820, false},
		{"1073741824", 966367641, false},
		{"", 0, true},
		{"-1\n", 0, true},
		{"12k\n", 0, true},
	}
	for _, tt := range tests {
		got, err := memoryLimitOf(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("memoryLimitOf(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
