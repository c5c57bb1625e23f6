package app

import (
	"errors"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitRatio is the share of the container's memory limit the Go
// runtime aims to stay under, leaving the rest for what is not Go heap
// (stacks, the binary, buffers); Prometheus's --auto-gomemlimit uses the
// same ratio.
const memoryLimitRatio = 0.9

// cgroupMemoryMax is the memory limit of the container, in cgroup v2.
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// SetMemoryLimit sets the Go runtime's soft memory limit to
// memoryLimitRatio of the container's memory limit, unless GOMEMLIMIT is
// set or there is no limit, and returns the limit set (0 when none). Without
// it the garbage collector lets the heap grow to twice what is live before
// it collects: at 1,000 Rollouts and 10,000 pods the manager's resident set
// peaked at 424 MiB with 162 MiB live, close to the chart's 512 MiB limit.
// With it, the collector works harder as the heap nears the limit instead of
// the container being killed.
func SetMemoryLimit() (int64, error) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0, nil
	}
	b, err := os.ReadFile(cgroupMemoryMax)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	limit, err := memoryLimitOf(string(b))
	if err != nil || limit == 0 {
		return 0, err
	}
	debug.SetMemoryLimit(limit)
	return limit, nil
}

// memoryLimitOf is the soft memory limit for a cgroup memory.max content:
// memoryLimitRatio of it, or 0 for "max" (no limit).
func memoryLimitOf(memoryMax string) (int64, error) {
	v := strings.TrimSpace(memoryMax)
	if v == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New(cgroupMemoryMax + ": not a number of bytes: " + strconv.Quote(v))
	}
	return int64(float64(n) * memoryLimitRatio), nil
}
