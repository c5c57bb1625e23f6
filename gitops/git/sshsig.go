package git

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// SSH signatures (OpenSSH's PROTOCOL.sshsig), which git writes with
// gpg.format=ssh. go-git reads them but verifies only OpenPGP, so sluice
// checks them itself, as ssh-keygen -Y verify does.
const (
	sshSigArmorStart = "-----BEGIN SSH SIGNATURE-----"
	sshSigArmorEnd   = "-----END SSH SIGNATURE-----"
	sshSigMagic      = "SSHSIG"
	sshSigVersion    = 1
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

// sshSignature is the content of an SSH signature after the magic bytes.
type sshSignature struct {
	Version       uint32
	PublicKey     []byte
	Namespace     string
	Reserved      string
	HashAlgorithm string
	Signature     []byte
}

// sshSignedData is what an SSH signature signs, after the magic bytes.
type sshSignedData struct {
	Namespace     string
	Reserved      string
	HashAlgorithm string
	Hash          []byte
}

// verifySSH checks an armored SSH signature of payload.
func (k *Keyring) verifySSH(armored string, payload []byte) (Signer, error) {
	sig, err := decodeSSHSignature(armored)
	if err != nil {
		return Signer{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	pub, err := ssh.ParsePublicKey(sig.PublicKey)
	if err != nil {
		return Signer{}, fmt.Errorf("%w: SSH signature key: %w", ErrBadSignature, err)
	}
	signer := Signer{Format: FormatSSH, Fingerprint: sshFingerprint(pub)}
	for _, a := range k.sshSigners {
		if bytes.Equal(a.key.Marshal(), pub.Marshal()) &&
			(len(a.namespaces) == 0 || slices.Contains(a.namespaces, sshSigNamespace)) {
			signer.Identities = append(signer.Identities, a.principals...)
		}
	}
	if len(signer.Identities) == 0 {
		return Signer{}, fmt.Errorf("%w: SSH key %s", ErrUnknownKey, signer.Fingerprint)
	}
	if sig.Namespace != sshSigNamespace {
		return Signer{}, fmt.Errorf("%w: SSH signature namespace is %q, not %q", ErrBadSignature, sig.Namespace, sshSigNamespace)
	}
	var digest []byte
	switch sig.HashAlgorithm {
	case "sha256":
		h := sha256.Sum256(payload)
		digest = h[:]
	case "sha512":
		h := sha512.Sum512(payload)
		digest = h[:]
	default:
		return Signer{}, fmt.Errorf("%w: SSH signature hash %q is not supported", ErrBadSignature, sig.HashAlgorithm)
	}
	var s ssh.Signature
	if err := ssh.Unmarshal(sig.Signature, &s); err != nil {
		return Signer{}, fmt.Errorf("%w: SSH signature blob: %w", ErrBadSignature, err)
	}
	if s.Format == ssh.KeyAlgoRSA {
		return Signer{}, fmt.Errorf("%w: SSH signature uses SHA-1 (ssh-rsa)", ErrBadSignature)
	}
	signed := append([]byte(sshSigMagic), ssh.Marshal(sshSignedData{
		Namespace:     sig.Namespace,
		Reserved:      sig.Reserved,
		HashAlgorithm: sig.HashAlgorithm,
		Hash:          digest,
	})...)
	if err := pub.Verify(signed, &s); err != nil {
		return Signer{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	return signer, nil
}

// decodeSSHSignature reads an armored SSH signature.
func decodeSSHSignature(armored string) (sshSignature, error) {
	body := strings.TrimSpace(armored)
	body, ok := strings.CutPrefix(body, sshSigArmorStart)
	if !ok {
		return sshSignature{}, errors.New("SSH signature: no armor header")
	}
	body, ok = strings.CutSuffix(strings.TrimSpace(body), sshSigArmorEnd)
	if !ok {
		return sshSignature{}, errors.New("SSH signature: no armor footer")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil {
		return sshSignature{}, fmt.Errorf("SSH signature: %w", err)
	}
	rest, ok := bytes.CutPrefix(raw, []byte(sshSigMagic))
	if !ok {
		return sshSignature{}, errors.New("SSH signature: bad magic")
	}
	var sig sshSignature
	if err := ssh.Unmarshal(rest, &sig); err != nil {
		return sshSignature{}, fmt.Errorf("SSH signature: %w", err)
	}
	if sig.Version != sshSigVersion {
		return sshSignature{}, fmt.Errorf("SSH signature: version %d is not supported", sig.Version)
	}
	return sig, nil
}
