package cluster

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

func TestWriteKubeconfigs_matchRESTConfigForEveryIdentity_andAdminIsPublishedLast(t *testing.T) {
	l := layout(t.TempDir())
	if err := l.reset(); err != nil {
		t.Fatal(err)
	}
	creds, err := writePKI(l.pkiDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const server = "https://127.0.0.1:6443"
	if err := writeKubeconfigs(l, server, creds); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.kubeconfig()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("admin kubeconfig %s before publishKubeconfig: %v, want it absent", l.kubeconfig(), err)
	}
	if err := publishKubeconfig(l); err != nil {
		t.Fatal(err)
	}
	published, err := clientcmd.BuildConfigFromFlags("", l.kubeconfig())
	if err != nil {
		t.Fatalf("loading the published kubeconfig: %v", err)
	}
	if !bytes.Equal(published.CertData, creds.clients[adminIdentity].cert) {
		t.Error("the published kubeconfig does not authenticate as the admin")
	}
	for _, id := range identities() {
		t.Run(id.name, func(t *testing.T) {
			path := l.componentKubeconfig(id.name)
			got, err := clientcmd.BuildConfigFromFlags("", path)
			if err != nil {
				t.Fatalf("loading %s: %v", path, err)
			}
			want := restConfig(server, creds.caCert, creds.clients[id.name])
			if got.Host != want.Host ||
				!bytes.Equal(got.CAData, want.CAData) ||
				!bytes.Equal(got.CertData, want.CertData) ||
				!bytes.Equal(got.KeyData, want.KeyData) {
				t.Errorf("kubeconfig %s does not match the REST config for %s", path, id.name)
			}
		})
	}
}
