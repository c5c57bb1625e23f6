package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/crypto/ssh"
)

// SignatureFormat is the kind of a commit signature.
type SignatureFormat string

// The signature formats Verify checks.
const (
	// FormatOpenPGP is a signature made by gpg (git's default).
	FormatOpenPGP SignatureFormat = "openpgp"
	// FormatSSH is a signature made by ssh-keygen (gpg.format=ssh).
	FormatSSH SignatureFormat = "ssh"
)

// Signer is who signed a commit, as the keyring knows them.
type Signer struct {
	// Format of the signature.
	Format SignatureFormat
	// Fingerprint of the key: the OpenPGP primary key's fingerprint in
	// upper-case hex, or the SSH key's SHA256:... fingerprint.
	Fingerprint string
	// Identities are the key's OpenPGP user IDs ("Jane Doe
	// <jane@example.com>"), or the principals its allowed-signers line
	// names.
	Identities []string
}

// Keyring holds the keys whose signatures Verify accepts.
type Keyring struct {
	// openPGP is the keyring as one armored block, for go-git's
	// Commit.Verify.
	openPGP string
	// pgpEntities are the parsed OpenPGP keys, to tell an unknown key from
	// a bad signature.
	pgpEntities openpgp.EntityList
	// sshSigners are the parsed allowed-signers lines.
	sshSigners []allowedSigner
}

// ParseKeyring reads the keys to trust: openPGP holds ASCII-armored OpenPGP
// public keys (one or more blocks, as gpg --export --armor writes them);
// sshAllowedSigners holds lines of an ssh-keygen allowed signers file
// ("<principals> [namespaces=\"git\"] <key type> <base64 key>", the file git's
// gpg.ssh.allowedSignersFile names). Either may be empty, not both.
func ParseKeyring(openPGP, sshAllowedSigners []byte) (*Keyring, error) {
	k := &Keyring{}
	if len(bytes.TrimSpace(openPGP)) > 0 {
		var list openpgp.EntityList
		rest := openPGP
		for len(bytes.TrimSpace(rest)) > 0 {
			// ReadArmoredKeyRing reads one armor block; keyrings exported
			// key by key hold several.
			block, next := splitArmor(rest)
			l, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(block))
			if err != nil {
				return nil, fmt.Errorf("OpenPGP keyring: %w", err)
			}
			list = append(list, l...)
			rest = next
		}
		armored, err := armorKeyring(list)
		if err != nil {
			return nil, err
		}
		k.pgpEntities = list
		k.openPGP = armored
	}
	if len(bytes.TrimSpace(sshAllowedSigners)) > 0 {
		signers, err := parseAllowedSigners(sshAllowedSigners)
		if err != nil {
			return nil, err
		}
		k.sshSigners = signers
	}
	if len(k.pgpEntities) == 0 && len(k.sshSigners) == 0 {
		return nil, errors.New("keyring holds no key")
	}
	return k, nil
}

// pgpArmorEnd ends an armored OpenPGP block.
const pgpArmorEnd = "-----END PGP PUBLIC KEY BLOCK-----"

// splitArmor returns the first armored block of data and the rest.
func splitArmor(data []byte) (block, rest []byte) {
	i := bytes.Index(data, []byte(pgpArmorEnd))
	if i < 0 {
		return data, nil
	}
	end := i + len(pgpArmorEnd)
	return data[:end], data[end:]
}

// armorKeyring writes keys as one armored block: go-git's Commit.Verify
// reads a single block.
func armorKeyring(keys openpgp.EntityList) (string, error) {
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		return "", fmt.Errorf("OpenPGP keyring: %w", err)
	}
	for _, e := range keys {
		if err := e.Serialize(w); err != nil {
			return "", fmt.Errorf("OpenPGP keyring: key %X: %w", e.PrimaryKey.Fingerprint, err)
		}
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("OpenPGP keyring: %w", err)
	}
	return b.String(), nil
}

// Verify implements Reader.
func (r *branchReader) Verify(ctx context.Context, sha string, keys *Keyring) (Signer, error) {
	h, err := parseSHA(sha)
	if err != nil {
		return Signer{}, fmt.Errorf("verify commit of %s: %w", r.where(), err)
	}
	if keys == nil {
		return Signer{}, fmt.Errorf("verify commit %s: no keyring", h)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.headCommit(); err != nil {
		return Signer{}, err
	}
	c, err := r.commitObject(ctx, h)
	if err != nil {
		return Signer{}, fmt.Errorf("verify commit %s: %w", h, err)
	}
	s, err := keys.verify(c)
	if err != nil {
		return Signer{}, fmt.Errorf("verify commit %s of %s: %w", h, r.where(), err)
	}
	return s, nil
}

// verify checks the signature of c.
func (k *Keyring) verify(c *object.Commit) (Signer, error) {
	sig := strings.TrimSpace(c.PGPSignature)
	switch {
	case sig == "":
		return Signer{}, ErrUnsigned
	case strings.HasPrefix(sig, "-----BEGIN PGP SIGNATURE-----"):
		return k.verifyOpenPGP(c)
	case strings.HasPrefix(sig, sshSigArmorStart):
		payload, err := unsignedPayload(c)
		if err != nil {
			return Signer{}, err
		}
		return k.verifySSH(sig, payload)
	}
	first, _, _ := strings.Cut(sig, "\n")
	return Signer{}, fmt.Errorf("%w: signature format %q is not supported (OpenPGP and SSH are)", ErrBadSignature, first)
}

func (k *Keyring) verifyOpenPGP(c *object.Commit) (Signer, error) {
	if len(k.pgpEntities) == 0 {
		return Signer{}, fmt.Errorf("%w: the commit has an OpenPGP signature and the keyring holds no OpenPGP key", ErrUnknownKey)
	}
	entity, err := c.Verify(k.openPGP)
	switch {
	case err == nil:
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return Signer{}, fmt.Errorf("%w: %w", ErrUnknownKey, err)
	default:
		return Signer{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	s := Signer{Format: FormatOpenPGP}
	if entity.PrimaryKey != nil {
		s.Fingerprint = strings.ToUpper(fmt.Sprintf("%x", entity.PrimaryKey.Fingerprint))
	}
	for name := range entity.Identities {
		s.Identities = append(s.Identities, name)
	}
	slices.Sort(s.Identities)
	return s, nil
}

// unsignedPayload is what the signature of c signs: the commit object
// without its signature header.
func unsignedPayload(c *object.Commit) ([]byte, error) {
	o := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(o); err != nil {
		return nil, fmt.Errorf("encode commit %s: %w", c.Hash, err)
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rd.Close() }()
	var b bytes.Buffer
	if _, err := b.ReadFrom(rd); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sshFingerprint is the SHA256 fingerprint ssh-keygen shows.
func sshFingerprint(k ssh.PublicKey) string { return ssh.FingerprintSHA256(k) }
