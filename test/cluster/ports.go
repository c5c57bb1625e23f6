package cluster

import (
	"fmt"
	"net"
	"strings"
)

// freePorts returns n distinct TCP ports on loopback that were free a moment
// ago. It holds all listeners until it has them all, so the kernel cannot
// hand out one twice. Another process may take a port before the component
// binds it; start-up notices the clash (see addressInUse) and tries again
// with other ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", loopbackHost+":0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer func() { _ = l.Close() }() //nolint:gocritic // held open until every port is picked, so none repeats
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// addressInUse reports whether a process log shows it failed to bind.
func addressInUse(log string) bool {
	return strings.Contains(log, "address already in use")
}
