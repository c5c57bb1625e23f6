package dataplane

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// podNetwork is the range the fake nodes' pod IPs come from: 198.18.0.0/15
// is reserved for network tests (RFC 2544) and is not routed anywhere.
// Kubernetes refuses loopback addresses (127.0.0.0/8) in EndpointSlices, so
// the pods cannot have those; instead the range is made local to this
// machine with a "local" route on the loopback device, after which the
// tests can listen on any address in it and the traffic never leaves the
// machine.
const podNetwork = "198.18.0.0/16"

// probeAddr is an address in podNetwork that only ensureLocalPodNetwork
// binds.
const probeAddr = "198.18.255.254:0"

// ensureLocalPodNetwork makes podNetwork local (ip route add local ... dev
// lo) unless it already is. That needs root (CAP_NET_ADMIN); without it the
// data-plane package fails, saying so.
func ensureLocalPodNetwork() error {
	if bindable() {
		return nil
	}
	out, err := exec.Command("ip", "route", "add", "local", podNetwork, "dev", "lo").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "File exists") {
		return fmt.Errorf("making %s local (ip route add local %s dev lo, needs root): %w: %s", podNetwork, podNetwork, err, out)
	}
	if !bindable() {
		return errors.New(podNetwork + " is still not local after adding the route")
	}
	return nil
}

func bindable() bool {
	l, err := net.Listen("tcp4", probeAddr)
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}
