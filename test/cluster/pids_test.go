package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParsePIDs(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Process
		wantErr bool
	}{
		{name: "empty", in: "", want: nil},
		{name: "two processes", in: "10 etcd\n11 kube-apiserver\n", want: []Process{{"etcd", 10}, {"kube-apiserver", 11}}},
		{name: "blank lines and spaces", in: "\n 10 etcd \n\n", want: []Process{{"etcd", 10}}},
		{name: "missing name", in: "10\n", wantErr: true},
		{name: "not a number", in: "x etcd\n", wantErr: true},
		{name: "negative pid", in: "-1 etcd\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePIDs([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parsePIDs() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("parsePIDs() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPIDsFile_roundTrips(t *testing.T) {
	dir := t.TempDir()
	want := []Process{{"etcd", 10}, {"kwok", 12}}
	if err := writePIDs(layout(dir), want); err != nil {
		t.Fatal(err)
	}
	got, err := Processes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Processes() = %v, want %v", got, want)
	}
	if err := os.Remove(filepath.Join(dir, "pids")); err != nil {
		t.Fatal(err)
	}
	if got, err := Processes(dir); err != nil || got != nil {
		t.Errorf("Processes() without a pids file = %v, %v; want none, nil", got, err)
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantComm  string
		wantState byte
		wantOK    bool
	}{
		{name: "plain", in: "42 (etcd) S 1 42", wantComm: "etcd", wantState: 'S', wantOK: true},
		{name: "zombie", in: "42 (kwok) Z 1 42", wantComm: "kwok", wantState: 'Z', wantOK: true},
		{name: "parenthesis and space in name", in: "42 (a) b) R 1", wantComm: "a) b", wantState: 'R', wantOK: true},
		{name: "truncated", in: "42 (etcd)", wantOK: false},
		{name: "garbage", in: "nothing here", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comm, state, ok := parseProcStat([]byte(tt.in))
			if ok != tt.wantOK || (ok && (comm != tt.wantComm || state != tt.wantState)) {
				t.Errorf("parseProcStat(%q) = %q, %q, %v; want %q, %q, %v",
					tt.in, comm, state, ok, tt.wantComm, tt.wantState, tt.wantOK)
			}
		})
	}
}

func TestProcessAlive(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Base(exe)
	_, statErr := os.Stat("/proc/self/stat")
	hasProc := statErr == nil
	tests := []struct {
		name      string
		proc      Process
		want      bool
		needsProc bool // the check reads /proc
	}{
		{name: "this test binary", proc: Process{Name: self, PID: os.Getpid()}, want: true},
		{name: "no PID", proc: Process{Name: self}, want: false},
		{name: "recycled PID of another binary", proc: Process{Name: "etcd", PID: os.Getpid()}, want: false, needsProc: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needsProc && !hasProc {
				t.Skip("no /proc on this system")
			}
			if got := tt.proc.Alive(); got != tt.want {
				t.Errorf("%v.Alive() = %v, want %v", tt.proc, got, tt.want)
			}
		})
	}
}
