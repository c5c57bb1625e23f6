// Package cluster runs a local Kubernetes control plane for tests, the demo
// and benchmarks: etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler as real processes on loopback, plus kwok, which plays the
// kubelet for a few fake nodes. Deployments scale, pods get scheduled and
// become Running and Ready within seconds, RBAC and admission (webhooks
// included) behave as in a real cluster, and no container ever runs.
//
// Start builds or finds the binaries (hack/controlplane/build.sh), writes
// certificates, kubeconfigs, etcd data and logs to a state directory and
// waits until the cluster is usable. Stop ends exactly the processes Start
// began. A package's TestMain uses Main to get one cluster for all its tests:
//
//	var testCluster *cluster.Cluster
//
//	func TestMain(m *testing.M) {
//		os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
//			testCluster = c
//			return nil
//		}))
//	}
//
// Every process runs in its own process group, logs to a file under the
// state directory's logs/ folder and, on Linux, is killed by the kernel when
// the process that started it dies, so a crashed or killed test binary does
// not leave a control plane behind.
package cluster
