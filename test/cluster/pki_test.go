package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestIssue_certificatesVerifyForTheirUse(t *testing.T) {
	now := time.Now()
	ca, err := newCA("test-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)

	tests := []struct {
		name      string
		req       certRequest
		dnsName   string // verified as a server name when set
		usage     x509.ExtKeyUsage
		wantValid bool
	}{
		{name: "serving cert for loopback IP", req: servingRequest(), dnsName: "127.0.0.1", usage: x509.ExtKeyUsageServerAuth, wantValid: true},
		{name: "serving cert for in-cluster name", req: servingRequest(), dnsName: "kubernetes.default.svc", usage: x509.ExtKeyUsageServerAuth, wantValid: true},
		{name: "serving cert for service IP", req: servingRequest(), dnsName: kubernetesServiceIP, usage: x509.ExtKeyUsageServerAuth, wantValid: true},
		{name: "serving cert for another host", req: servingRequest(), dnsName: "example.com", usage: x509.ExtKeyUsageServerAuth, wantValid: false},
		{name: "serving cert used as client cert", req: servingRequest(), usage: x509.ExtKeyUsageClientAuth, wantValid: false},
		{name: "client cert", req: certRequest{commonName: "u", organizations: []string{"system:masters"}}, usage: x509.ExtKeyUsageClientAuth, wantValid: true},
		{name: "client cert used as serving cert", req: certRequest{commonName: "u"}, usage: x509.ExtKeyUsageServerAuth, wantValid: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := ca.issue(tt.req, now)
			if err != nil {
				t.Fatal(err)
			}
			_, err = kp.cert.Verify(x509.VerifyOptions{
				DNSName:     tt.dnsName,
				Roots:       roots,
				KeyUsages:   []x509.ExtKeyUsage{tt.usage},
				CurrentTime: now,
			})
			if (err == nil) != tt.wantValid {
				t.Errorf("Verify() error = %v, want valid %v", err, tt.wantValid)
			}
		})
	}
}

func TestWritePKI_writesLoadableFilesAndAClientCertPerIdentity(t *testing.T) {
	dir := t.TempDir()
	creds, err := writePKI(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{caCertFile, caKeyFile}, {servingCertFile, servingKeyFile}} {
		if _, err := tls.LoadX509KeyPair(filepath.Join(dir, pair[0]), filepath.Join(dir, pair[1])); err != nil {
			t.Errorf("loading %s: %v", pair[0], err)
		}
	}
	for _, id := range identities() {
		pair, ok := creds.clients[id.name]
		if !ok {
			t.Errorf("no client certificate for %s", id.name)
			continue
		}
		cert, err := tls.X509KeyPair(pair.cert, pair.key)
		if err != nil {
			t.Errorf("client pair for %s: %v", id.name, err)
			continue
		}
		leaf := cert.Leaf
		if leaf.Subject.CommonName != id.user || !slices.Equal(leaf.Subject.Organization, id.groups) {
			t.Errorf("%s: subject CN=%q O=%v, want CN=%q O=%v", id.name,
				leaf.Subject.CommonName, leaf.Subject.Organization, id.user, id.groups)
		}
	}
}

// The front-proxy client certificate verifies against the front-proxy CA
// only, never against the cluster CA, and carries the one allowed name.
func TestWritePKI_frontProxyClientIsSignedByItsOwnCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := writePKI(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, frontProxyCertFile), filepath.Join(dir, frontProxyKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	leaf := pair.Leaf
	if leaf.Subject.CommonName != frontProxyClientName {
		t.Fatalf("front-proxy client CN %q, want %q", leaf.Subject.CommonName, frontProxyClientName)
	}
	verify := func(caFile string) error {
		raw, err := os.ReadFile(filepath.Join(dir, caFile))
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(raw)
		_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err
	}
	if err := verify(frontProxyCACertFile); err != nil {
		t.Errorf("against the front-proxy CA: %v", err)
	}
	if err := verify(caCertFile); err == nil {
		t.Error("the front-proxy client verifies against the cluster CA; it must not")
	}
}
