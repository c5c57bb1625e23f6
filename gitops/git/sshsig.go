package git

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// SSH signatures (OpenSSH's PROTOCOL.sshsig), which git writes with
// gpg.format=ssh. go-git reads them but verifies only OpenPGP; sluice
// verifies them with github.com/hiddeco/sshsig. That package reads no
// allowed signers file, so parseAllowedSigners below is sluice's own.
const (
	sshSigArmorStart = "-----BEGIN SSH SIGNATURE-----"
	// sshSigNamespace is the namespace git signs commits in.
	sshSigNamespace = "git"
)

// allowedSigner is one line of an allowed signers file.
type allowedSigner struct {
	principals []string
	// namespaces the key may sign in; empty means any.
	namespaces []string
	key        ssh.PublicKey
}

// parseAllowedSigners reads an allowed signers file: per line the
// principals (comma-separated), options, and a public key. Of the options
// only namespaces="..." is supported; cert-authority, valid-after and
// valid-before are refused rather than ignored.
func parseAllowedSigners(data []byte) ([]allowedSigner, error) {
	var out []allowedSigner
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		principals, rest, err := cutPrincipals(line)
		if err != nil {
			return nil, fmt.Errorf("allowed signers line %d: %w", n+1, err)
		}
		key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(rest))
		if err != nil {
			return nil, fmt.Errorf("allowed signers line %d: %w", n+1, err)
		}
		s := allowedSigner{principals: strings.Split(principals, ","), key: key}
		for _, o := range options {
			name, value, _ := strings.Cut(o, "=")
			switch strings.ToLower(name) {
			case "namespaces":
				s.namespaces = strings.Split(strings.Trim(value, `"`), ",")
			default:
				return nil, fmt.Errorf("allowed signers line %d: option %q is not supported", n+1, name)
			}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("allowed signers: no key")
	}
	return out, nil
}

// cutPrincipals splits the principals field, which may be quoted, off an
// allowed signers line.
func cutPrincipals(line string) (principals, rest string, err error) {
	if strings.HasPrefix(line, `"`) {
		end := strings.Index(line[1:], `"`)
		if end < 0 {
			return "", "", errors.New("unterminated quoted principals")
		}
		return line[1 : end+1], strings.TrimSpace(line[end+2:]), nil
	}
	principals, rest, ok := strings.Cut(line, " ")
	if !ok {
		if principals, rest, ok = strings.Cut(line, "\t"); !ok {
			return "", "", errors.New("no key after the principals")
		}
	}
	return principals, strings.TrimSpace(rest), nil
}

// verifySSH checks an armored SSH signature of payload with hiddeco/sshsig, as ssh-keygen -Y
// verify does: the key must be an allowed signer for the namespace git, the signature of the
// namespace git, its hash SHA-256 or SHA-512, and an RSA signature not SHA-1.
func (k *Keyring) verifySSH(armored string, payload []byte) (Signer, error) {
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return Signer{}, fmt.Errorf("%w: SSH signature: %w", ErrBadSignature, err)
	}
	signer := Signer{Format: FormatSSH, Fingerprint: sshFingerprint(sig.PublicKey)}
	for _, a := range k.sshSigners {
		if bytes.Equal(a.key.Marshal(), sig.PublicKey.Marshal()) &&
			(len(a.namespaces) == 0 || slices.Contains(a.namespaces, sshSigNamespace)) {
			signer.Identities = append(signer.Identities, a.principals...)
		}
	}
	if len(signer.Identities) == 0 {
		return Signer{}, fmt.Errorf("%w: SSH key %s", ErrUnknownKey, signer.Fingerprint)
	}
	switch err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, sshSigNamespace); {
	case err == nil:
		return signer, nil
	case errors.Is(err, sshsig.ErrNamespaceMismatch):
		return Signer{}, fmt.Errorf("%w: SSH signature namespace is %q, not %q", ErrBadSignature, sig.Namespace, sshSigNamespace)
	case errors.Is(err, sshsig.ErrUnsupportedHashAlgorithm), errors.Is(err, sshsig.ErrUnavailableHashAlgorithm):
		return Signer{}, fmt.Errorf("%w: SSH signature hash %q is not supported", ErrBadSignature, sig.HashAlgorithm)
	default:
		return Signer{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
}
