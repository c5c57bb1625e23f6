package cluster

import (
	"crypto/tls"
	"crypto/x509"
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
