package cluster

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigContext names the cluster, context and current context of every
// kubeconfig the package writes.
const kubeconfigContext = "sluice"

// kubeconfig returns a self-contained kubeconfig (certificates embedded)
// that reaches server, trusts caCert and authenticates as user with client.
func kubeconfig(server string, caCert []byte, user string, client pemPair) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[kubeconfigContext] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caCert,
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: client.cert,
		ClientKeyData:         client.key,
	}
	cfg.Contexts[kubeconfigContext] = &clientcmdapi.Context{
		Cluster:  kubeconfigContext,
		AuthInfo: user,
	}
	cfg.CurrentContext = kubeconfigContext
	return cfg
}

// restConfig returns the client configuration matching kubeconfig for the
// same server and credentials.
func restConfig(server string, caCert []byte, client pemPair) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   caCert,
			CertData: client.cert,
			KeyData:  client.key,
		},
		// Tests create objects in bursts; the client-side defaults (5 QPS)
		// would make them wait, not the cluster.
		QPS:   200,
		Burst: 400,
	}
}

// writeKubeconfigs writes a kubeconfig per client of the kube-apiserver at
// server (the admin's included, under kubeconfigs/) and kube-scheduler's
// configuration, which names its kubeconfig.
func writeKubeconfigs(l layout, server string, creds *credentials) error {
	for _, id := range identities() {
		path := l.componentKubeconfig(id.name)
		cfg := kubeconfig(server, creds.caCert, id.name, creds.clients[id.name])
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			return fmt.Errorf("writing kubeconfig %s: %w", path, err)
		}
	}
	if err := os.WriteFile(l.schedulerConfig(), schedulerConfig(l), 0o600); err != nil {
		return fmt.Errorf("writing kube-scheduler configuration: %w", err)
	}
	return nil
}

// publishKubeconfig copies the admin kubeconfig to the top of the state
// directory once the cluster is ready, atomically: whoever waits for that
// file to appear (a Makefile, a script) sees a usable cluster and a whole
// file.
func publishKubeconfig(l layout) error {
	data, err := os.ReadFile(l.componentKubeconfig(adminIdentity))
	if err != nil {
		return fmt.Errorf("reading admin kubeconfig: %w", err)
	}
	tmp := l.kubeconfig() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if err := os.Rename(tmp, l.kubeconfig()); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}
