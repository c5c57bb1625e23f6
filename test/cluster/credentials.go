package cluster

import (
	"fmt"
	"net"
	"os"
	"time"
)

// File names in the state directory's pki/ folder.
const (
	caCertFile      = "ca.crt"
	caKeyFile       = "ca.key"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saKeyFile       = "sa.key"
	saPubFile       = "sa.pub"
	// The aggregation layer's: the front-proxy CA that kube-apiserver
	// trusts for requests an aggregated API server proxies back, and the
	// client certificate kube-apiserver presents to aggregated API servers.
	frontProxyCACertFile = "front-proxy-ca.crt"
	frontProxyCertFile   = "front-proxy-client.crt"
	frontProxyKeyFile    = "front-proxy-client.key"
)

// frontProxyClientName is the common name of the front-proxy client
// certificate, the only name kube-apiserver accepts request headers from.
const frontProxyClientName = "front-proxy-client"

// Identities of the kube-apiserver clients, used as kubeconfig names.
const (
	adminIdentity             = "admin"
	controllerManagerIdentity = "kube-controller-manager"
	schedulerIdentity         = "kube-scheduler"
	kwokIdentity              = "kwok"
)

// identity is a client of kube-apiserver authenticating with a certificate.
type identity struct {
	name   string   // kubeconfig file and user name
	user   string   // certificate CN: the user RBAC sees
	groups []string // certificate O: the user's groups
}

// identities lists every client certificate the cluster issues. The
// controller manager and the scheduler get the users the default RBAC
// policy grants their permissions to; the admin and kwok, which fakes every
// kubelet, are cluster admins.
func identities() []identity {
	return []identity{
		{name: adminIdentity, user: "sluice-admin", groups: []string{"system:masters"}},
		{name: controllerManagerIdentity, user: "system:kube-controller-manager"},
		{name: schedulerIdentity, user: "system:kube-scheduler"},
		{name: kwokIdentity, user: "kwok", groups: []string{"system:masters"}},
	}
}

// servingRequest is the kube-apiserver serving certificate: valid for
// loopback, where it listens, and for the names and service IP in-cluster
// clients would use.
func servingRequest() certRequest {
	return certRequest{
		commonName: "kube-apiserver",
		dnsNames: []string{
			"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local",
		},
		ips:    []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.ParseIP(kubernetesServiceIP)},
		server: true,
	}
}

// pemPair is a PEM-encoded certificate and private key.
type pemPair struct {
	cert, key []byte
}

// credentials are the cluster CA and the client certificates it issued,
// PEM-encoded, as kubeconfigs embed them.
type credentials struct {
	caCert  []byte
	clients map[string]pemPair // by identity.name
}

// writePKI creates the cluster CA, the kube-apiserver serving certificate,
// the service-account signing key and one client certificate per identity,
// writes them all to dir and returns what the kubeconfigs need.
func writePKI(dir string, now time.Time) (*credentials, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	ca, err := newCA("sluice-cluster-ca", now)
	if err != nil {
		return nil, fmt.Errorf("creating CA: %w", err)
	}
	creds := &credentials{caCert: ca.certPEM(), clients: map[string]pemPair{}}
	if err := writeKeyPair(dir, caCertFile, caKeyFile, ca); err != nil {
		return nil, err
	}
	serving, err := ca.issue(servingRequest(), now)
	if err != nil {
		return nil, fmt.Errorf("issuing kube-apiserver serving certificate: %w", err)
	}
	if err := writeKeyPair(dir, servingCertFile, servingKeyFile, serving); err != nil {
		return nil, err
	}
	if err := writeServiceAccountKey(dir); err != nil {
		return nil, err
	}
	if err := writeFrontProxy(dir, now); err != nil {
		return nil, err
	}
	for _, id := range identities() {
		kp, err := ca.issue(certRequest{commonName: id.user, organizations: id.groups}, now)
		if err != nil {
			return nil, fmt.Errorf("issuing client certificate for %s: %w", id.name, err)
		}
		key, err := kp.keyPEM()
		if err != nil {
			return nil, fmt.Errorf("encoding client key for %s: %w", id.name, err)
		}
		creds.clients[id.name] = pemPair{cert: kp.certPEM(), key: key}
	}
	return creds, nil
}

// writeKeyPair writes kp's certificate and key to dir.
func writeKeyPair(dir, certFile, keyFile string, kp *keyPair) error {
	key, err := kp.keyPEM()
	if err != nil {
		return fmt.Errorf("encoding key for %s: %w", certFile, err)
	}
	if err := writeFile(dir, certFile, kp.certPEM()); err != nil {
		return err
	}
	return writeFile(dir, keyFile, key)
}

// writeFrontProxy writes the aggregation layer's front-proxy CA and the
// client certificate kube-apiserver proxies to aggregated API servers
// (such as a metrics server) with. It is a CA of its own, as kubeadm makes
// it, so that no client certificate of the cluster CA can pass as the
// proxy.
func writeFrontProxy(dir string, now time.Time) error {
	ca, err := newCA("sluice-front-proxy-ca", now)
	if err != nil {
		return fmt.Errorf("creating front-proxy CA: %w", err)
	}
	if err := writeFile(dir, frontProxyCACertFile, ca.certPEM()); err != nil {
		return err
	}
	client, err := ca.issue(certRequest{commonName: frontProxyClientName}, now)
	if err != nil {
		return fmt.Errorf("issuing the front-proxy client certificate: %w", err)
	}
	return writeKeyPair(dir, frontProxyCertFile, frontProxyKeyFile, client)
}

// writeServiceAccountKey writes the key pair kube-controller-manager and
// kube-apiserver sign service-account tokens with and verify them against.
func writeServiceAccountKey(dir string) error {
	key, err := newKey()
	if err != nil {
		return fmt.Errorf("creating service-account signing key: %w", err)
	}
	priv, err := privateKeyPEM(key)
	if err != nil {
		return fmt.Errorf("encoding service-account signing key: %w", err)
	}
	pub, err := publicKeyPEM(key)
	if err != nil {
		return fmt.Errorf("encoding service-account public key: %w", err)
	}
	if err := writeFile(dir, saKeyFile, priv); err != nil {
		return err
	}
	return writeFile(dir, saPubFile, pub)
}
