package git

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHosts checks SSH host keys against known_hosts lines with
// golang.org/x/crypto/ssh/knownhosts (host patterns, negations, hashed
// names and @revoked keys as OpenSSH reads them).
type knownHosts struct {
	check ssh.HostKeyCallback
}

// parseKnownHosts reads known_hosts lines. knownhosts.New reads files only,
// and the lines come from a Secret: they are written to a private temporary
// file that is removed as soon as it has been read. @cert-authority lines are
// left out (host certificates are not supported): knownhosts would also accept
// a certificate authority's key presented as a plain host key, which OpenSSH
// does not.
func parseKnownHosts(data []byte) (knownHosts, error) {
	f, err := os.CreateTemp("", "sluice-known-hosts-*")
	if err != nil {
		return knownHosts{}, fmt.Errorf("known hosts: %w", err)
	}
	name := f.Name()
	defer func() { _ = os.Remove(name) }()
	_, err = f.Write(withoutCertAuthorities(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return knownHosts{}, fmt.Errorf("known hosts: %w", err)
	}
	check, err := knownhosts.New(name)
	if err != nil {
		// The error names the temporary file; name the Secret's key instead.
		return knownHosts{}, fmt.Errorf("known hosts: %s", strings.ReplaceAll(err.Error(), name, "known_hosts"))
	}
	return knownHosts{check: check}, nil
}

// withoutCertAuthorities blanks the @cert-authority lines of data, keeping the
// line numbers of the others for knownhosts' errors.
func withoutCertAuthorities(data []byte) []byte {
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		if bytes.HasPrefix(bytes.TrimSpace(l), []byte("@cert-authority")) {
			lines[i] = nil
		}
	}
	return bytes.Join(lines, []byte("\n"))
}

// callback accepts a host key only when it is listed for the host and not
// revoked.
func (k knownHosts) callback() ssh.HostKeyCallback {
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := k.check(hostname, remote, key)
		var revoked *knownhosts.RevokedError
		var unknown *knownhosts.KeyError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &revoked):
			return fmt.Errorf("%w: %s presented a revoked %s key", ErrHostKey, knownhosts.Normalize(hostname), key.Type())
		case errors.As(err, &unknown):
			return fmt.Errorf("%w: %s presented %s key %s, which the known hosts do not list for it",
				ErrHostKey, knownhosts.Normalize(hostname), key.Type(), ssh.FingerprintSHA256(key))
		}
		return fmt.Errorf("%w: %w", ErrHostKey, err)
	}
}

// algorithms lists the host key algorithms to ask addr (host:port) for:
// those of its known keys, so a server with several keys presents one we
// can check. The knownhosts package has no lookup by host; its KeyError
// lists the keys known for a host when it is shown a key it does not know
// (probeKey).
func (k knownHosts) algorithms(addr string) []string {
	var unknown *knownhosts.KeyError
	if !errors.As(k.check(addr, &net.TCPAddr{}, probeKey{}), &unknown) {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, known := range unknown.Want {
		algos := []string{known.Key.Type()}
		if known.Key.Type() == ssh.KeyAlgoRSA {
			algos = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
		}
		for _, a := range algos {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// probeKey is a public key no known_hosts line lists.
type probeKey struct{}

var _ ssh.PublicKey = probeKey{}

// Type implements ssh.PublicKey.
func (probeKey) Type() string { return "sluice-probe" }

// Marshal implements ssh.PublicKey.
func (probeKey) Marshal() []byte { return []byte("sluice-probe") }

// Verify implements ssh.PublicKey.
func (probeKey) Verify([]byte, *ssh.Signature) error { return errors.New("probe key") }
