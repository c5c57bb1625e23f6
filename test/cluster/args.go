package cluster

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
)

// Network settings of the cluster. The service range is kubeadm's default;
// pod IPs come from each fake node's podCIDR, carved out of podCIDR.
const (
	serviceCIDR          = "10.96.0.0/12"
	kubernetesServiceIP  = "10.96.0.1"
	podCIDR              = "10.244.0.0/16"
	serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
)

// Client-side rate limits of kube-controller-manager and kube-scheduler.
const (
	clientQPS   = 200
	clientBurst = 400
)

// Where the servers listen, and etcd's member name.
const (
	loopbackHost   = "127.0.0.1"
	etcdMemberName = "sluice"
)

// kwok settings: which nodes it manages, and how long the node leases it
// renews on behalf of the fake kubelets last. Without leases the node
// lifecycle controller marks the nodes NotReady after its grace period,
// because kwok's heartbeat-with-lease stage updates node status only every
// ten minutes or so. fallbackNodeIP is the InternalIP kwok reports for a
// node that has none; every fake node gets its own (see nodeIP).
const (
	fakeNodeAnnotation = "kwok.x-k8s.io/node"
	fakeNodeValue      = "fake"
	kwokLeaseSeconds   = 40
	kwokStagesFile     = "kwok-stages.yaml"
	fallbackNodeIP     = "10.240.0.1"
)

// loopbackURL returns scheme://127.0.0.1:port.
func loopbackURL(scheme string, port int) string {
	return scheme + "://" + loopbackHost + ":" + strconv.Itoa(port)
}

// etcdArgs runs a single-member etcd on loopback. fsync is off: the data is
// thrown away with the cluster, and syncing makes every write slower.
func etcdArgs(l layout, clientPort, peerPort int) []string {
	client := loopbackURL("http", clientPort)
	peer := loopbackURL("http", peerPort)
	return []string{
		"--name=" + etcdMemberName,
		"--data-dir=" + l.etcdDir(),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=" + etcdMemberName + "=" + peer,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync=true",
	}
}

// apiserverArgs runs kube-apiserver on loopback with RBAC, the default
// admission plugins (webhooks included) and client-certificate
// authentication against the cluster CA. The endpoint reconciler is off:
// it would publish the loopback address as the kubernetes Service endpoint,
// which kube-apiserver rejects. The aggregation layer is set up as kubeadm
// sets it (front-proxy CA, request headers, proxy client certificate), and
// reaches an aggregated API server at its Service's endpoints rather than
// its cluster IP, which nothing routes here: an APIService (metrics.k8s.io
// for the HorizontalPodAutoscaler) can be served by a process on this
// machine, behind a Service without selector whose endpoint is the
// machine's address.
func apiserverArgs(l layout, etcdURL string, port int) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + loopbackHost,
		"--advertise-address=" + loopbackHost,
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + l.pki(servingCertFile),
		"--tls-private-key-file=" + l.pki(servingKeyFile),
		"--client-ca-file=" + l.pki(caCertFile),
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + l.pki(saPubFile),
		"--service-account-signing-key-file=" + l.pki(saKeyFile),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=RBAC",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--profiling=false",
		"--requestheader-client-ca-file=" + l.pki(frontProxyCACertFile),
		"--requestheader-allowed-names=" + frontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + l.pki(frontProxyCertFile),
		"--proxy-client-key-file=" + l.pki(frontProxyKeyFile),
		"--enable-aggregator-routing=true",
	}
}

// controllerManagerArgs runs every default controller, each with its own
// service account as in a real cluster, without leader election or a
// serving port. It signs service-account tokens and CSRs with the cluster's
// keys. The raised client rate limits matter: at the default 20 QPS,
// creating the controllers' service accounts alone takes seconds, and large
// Deployments scale at the limiter's pace. The HorizontalPodAutoscaler
// controller (one of the defaults) looks at its autoscalers every 2s
// instead of 15s, so a test of scaling does not wait; with no autoscaler
// it does nothing.
func controllerManagerArgs(l layout) []string {
	return []string{
		"--kubeconfig=" + l.componentKubeconfig(controllerManagerIdentity),
		"--controllers=*",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + l.pki(saKeyFile),
		"--root-ca-file=" + l.pki(caCertFile),
		"--cluster-signing-cert-file=" + l.pki(caCertFile),
		"--cluster-signing-key-file=" + l.pki(caKeyFile),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--kube-api-qps=" + strconv.Itoa(clientQPS),
		"--kube-api-burst=" + strconv.Itoa(clientBurst),
		"--leader-elect=false",
		"--secure-port=0",
		"--profiling=false",
		"--horizontal-pod-autoscaler-sync-period=2s",
	}
}

// schedulerArgs runs kube-scheduler with schedulerConfig and no serving port.
func schedulerArgs(l layout) []string {
	return []string{
		"--config=" + l.schedulerConfig(),
		"--secure-port=0",
	}
}

// schedulerConfig is kube-scheduler's configuration (its flags for these
// settings are deprecated): no leader election, and client rate limits
// high enough that binding hundreds of pods is not throttled client-side.
func schedulerConfig(l layout) []byte {
	return fmt.Appendf(nil, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %d
  burst: %d
leaderElection:
  leaderElect: false
enableProfiling: false
`, l.componentKubeconfig(schedulerIdentity), clientQPS, clientBurst)
}

// kwokArgs runs kwok for the nodes annotated as fake, with the stages that
// make nodes Ready at once and pods Running and Ready as soon as they are
// bound. kwok serves nothing (no --server-address): there are no kubelet
// endpoints for logs or exec.
func kwokArgs(l layout, binDir string) []string {
	return []string{
		"--kubeconfig=" + l.componentKubeconfig(kwokIdentity),
		"--config=" + filepath.Join(binDir, kwokStagesFile),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + fakeNodeAnnotation + "=" + fakeNodeValue,
		"--manage-nodes-with-label-selector=",
		"--node-lease-duration-seconds=" + strconv.Itoa(kwokLeaseSeconds),
		"--cidr=" + podCIDR,
		"--node-ip=" + fallbackNodeIP,
	}
}

// nodePodCIDR is the pod range of the fake node with the given index: a /24
// per node, so each node has room for its 110 pods.
func nodePodCIDR(index int) string {
	return fmt.Sprintf("10.244.%d.0/24", index)
}

// nodePodCIDRIn is the /24 at index within network, an IPv4 /16.
func nodePodCIDRIn(network string, index int) (string, error) {
	prefix, err := netip.ParsePrefix(network)
	if err != nil {
		return "", err
	}
	if !prefix.Addr().Is4() || prefix.Bits() != 16 {
		return "", fmt.Errorf("%s is not an IPv4 /16", network)
	}
	a := prefix.Masked().Addr().As4()
	return fmt.Sprintf("%d.%d.%d.0/24", a[0], a[1], index), nil
}

// nodeIP is the InternalIP of the fake node with the given index.
func nodeIP(index int) string {
	return fmt.Sprintf("10.240.%d.%d", index/250, index%250+10)
}
