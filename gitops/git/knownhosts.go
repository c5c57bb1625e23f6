package git

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1" // known_hosts hashes host names with HMAC-SHA1
	"encoding/base64"
	"fmt"
	"net"
	"path"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHost is one known_hosts line: host patterns and a key.
type knownHost struct {
	patterns []string
	key      ssh.PublicKey
	revoked  bool
}

// knownHosts is a parsed known_hosts file, kept in memory: the credentials
// come from a Secret, not from a file.
type knownHosts []knownHost

// parseKnownHosts reads known_hosts lines. @cert-authority lines are
// ignored (host certificates are not supported); @revoked keys are refused.
func parseKnownHosts(data []byte) (knownHosts, error) {
	var out knownHosts
	rest := data
	for len(bytes.TrimSpace(rest)) > 0 {
		marker, hosts, key, _, next, err := ssh.ParseKnownHosts(rest)
		if err != nil {
			return nil, fmt.Errorf("known hosts: %w", err)
		}
		rest = next
		switch marker {
		case "":
			out = append(out, knownHost{patterns: hosts, key: key})
		case "revoked":
			out = append(out, knownHost{patterns: hosts, key: key, revoked: true})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("known hosts: no host key")
	}
	return out, nil
}

// keysFor lists the keys known for addr (host:port), and whether one of
// them is the key given and revoked.
func (k knownHosts) keysFor(addr string) (keys, revoked []ssh.PublicKey) {
	host := knownhosts.Normalize(addr)
	for _, h := range k {
		if !matchHost(h.patterns, host) {
			continue
		}
		if h.revoked {
			revoked = append(revoked, h.key)
			continue
		}
		keys = append(keys, h.key)
	}
	return keys, revoked
}

// callback accepts a host key only when it is listed for the host.
func (k knownHosts) callback() ssh.HostKeyCallback {
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		addr := hostname
		if remote != nil && !strings.Contains(hostname, ":") {
			addr = remote.String()
		}
		keys, revoked := k.keysFor(addr)
		for _, r := range revoked {
			if bytes.Equal(r.Marshal(), key.Marshal()) {
				return fmt.Errorf("%w: %s presented a revoked %s key", ErrHostKey, knownhosts.Normalize(addr), key.Type())
			}
		}
		for _, want := range keys {
			if bytes.Equal(want.Marshal(), key.Marshal()) {
				return nil
			}
		}
		return fmt.Errorf("%w: %s presented %s key %s, which the known hosts do not list for it",
			ErrHostKey, knownhosts.Normalize(addr), key.Type(), ssh.FingerprintSHA256(key))
	}
}

// algorithms lists the host key algorithms to ask addr for: those of its
// known keys, so a server with several keys presents one we can check.
func (k knownHosts) algorithms(addr string) []string {
	keys, _ := k.keysFor(addr)
	var out []string
	seen := map[string]bool{}
	for _, key := range keys {
		algos := []string{key.Type()}
		if key.Type() == ssh.KeyAlgoRSA {
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

// matchHost applies OpenSSH's host pattern rules: a line matches when one
// of its patterns matches and none of its negated (!) patterns does.
// Patterns may use * and ?, or be hashed (|1|salt|hash).
func matchHost(patterns []string, host string) bool {
	matched := false
	for _, p := range patterns {
		negated := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if !matchPattern(p, host) {
			continue
		}
		if negated {
			return false
		}
		matched = true
	}
	return matched
}

func matchPattern(pattern, host string) bool {
	if strings.HasPrefix(pattern, "|1|") {
		return matchHashed(pattern, host)
	}
	// path.Match treats '[' specially; known_hosts brackets a host with a
	// port. Compare literally unless the pattern has wildcards.
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == host
	}
	escaped := strings.NewReplacer("[", `\[`, "]", `\]`).Replace(pattern)
	ok, err := path.Match(escaped, host)
	return err == nil && ok
}

// matchHashed checks a |1|base64(salt)|base64(HMAC-SHA1(salt, host)) entry.
func matchHashed(pattern, host string) bool {
	parts := strings.Split(pattern, "|")
	if len(parts) != 4 {
		return false
	}
	salt, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	want, err := base64.StdEncoding.DecodeString(parts[3])
	if err != nil {
		return false
	}
	mac := hmac.New(sha1.New, salt)
	mac.Write([]byte(host))
	return hmac.Equal(mac.Sum(nil), want)
}
