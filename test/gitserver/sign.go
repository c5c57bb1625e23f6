package gitserver

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	gogit "github.com/go-git/go-git/v5"
	"golang.org/x/crypto/ssh"
)

// NewOpenPGPKey makes an Ed25519 OpenPGP key for "name <email>" and
// returns it (with its private key, for OpenPGPSigner) and its armored
// public key (for a keyring).
func NewOpenPGPKey(name, email string) (*openpgp.Entity, []byte, error) {
	e, err := openpgp.NewEntity(name, "", email, &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := e.Serialize(w); err != nil {
		return nil, nil, err
	}
	if err := w.Close(); err != nil {
		return nil, nil, err
	}
	return e, b.Bytes(), nil
}

// OpenPGPSigner signs commits with e, as git with gpg does: an armored
// detached signature.
func OpenPGPSigner(e *openpgp.Entity) gogit.Signer { return pgpSigner{e} }

type pgpSigner struct{ e *openpgp.Entity }

func (s pgpSigner) Sign(message io.Reader) ([]byte, error) {
	var b bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&b, s.e, message, nil); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// NewSSHKey makes an Ed25519 SSH key and returns its signer and its
// private key in OpenSSH PEM format (for a file or a Secret).
func NewSSHKey() (ssh.Signer, []byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, nil, err
	}
	return signer, pem.EncodeToMemory(block), nil
}

// AllowedSignersLine is the allowed signers line (git's
// gpg.ssh.allowedSignersFile) trusting key for principal.
func AllowedSignersLine(principal string, key ssh.PublicKey) string {
	return principal + ` namespaces="git" ` + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
}

// SSHSigner signs commits with an SSH key, as git with gpg.format=ssh does
// (ssh-keygen -Y sign -n git): an armored SSH signature (OpenSSH's
// PROTOCOL.sshsig) over SHA-512 of the commit.
func SSHSigner(s ssh.Signer) gogit.Signer { return sshSigner{s} }

type sshSigner struct{ s ssh.Signer }

func (s sshSigner) Sign(message io.Reader) ([]byte, error) {
	data, err := io.ReadAll(message)
	if err != nil {
		return nil, err
	}
	const magic, namespace, hash = "SSHSIG", "git", "sha512"
	sum := sha512.Sum512(data)
	signed := append([]byte(magic), ssh.Marshal(struct {
		Namespace, Reserved, Hash string
		Digest                    []byte
	}{namespace, "", hash, sum[:]})...)
	var sig *ssh.Signature
	if as, ok := s.s.(ssh.AlgorithmSigner); ok && s.s.PublicKey().Type() == ssh.KeyAlgoRSA {
		sig, err = as.SignWithAlgorithm(rand.Reader, signed, ssh.KeyAlgoRSASHA512)
	} else {
		sig, err = s.s.Sign(rand.Reader, signed)
	}
	if err != nil {
		return nil, fmt.Errorf("SSH sign: %w", err)
	}
	blob := append([]byte(magic), ssh.Marshal(struct {
		Version                   uint32
		PublicKey                 []byte
		Namespace, Reserved, Hash string
		Signature                 []byte
	}{1, s.s.PublicKey().Marshal(), namespace, "", hash, ssh.Marshal(sig)})...)
	enc := base64.StdEncoding.EncodeToString(blob)
	var b strings.Builder
	b.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(enc) > 70 {
		b.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	b.WriteString(enc + "\n-----END SSH SIGNATURE-----\n")
	return []byte(b.String()), nil
}
