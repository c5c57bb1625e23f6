package cluster

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

func TestComponentArgs_carryTheSettingsTheClusterReliesOn(t *testing.T) {
	l := layout("/state")
	tests := []struct {
		name      string
		args      []string
		want      []string
		forbidden []string // flag prefixes that must not appear
	}{
		{
			name: "etcd",
			args: etcdArgs(l, 2379, 2380),
			want: []string{"--listen-client-urls=http://127.0.0.1:2379", "--listen-peer-urls=http://127.0.0.1:2380", "--data-dir=/state/etcd"},
		},
		{
			name: "kube-apiserver",
			args: apiserverArgs(l, "http://127.0.0.1:2379", 6443),
			want: []string{
				"--authorization-mode=RBAC", "--endpoint-reconciler-type=none", "--bind-address=127.0.0.1",
				"--secure-port=6443", "--client-ca-file=/state/pki/ca.crt", "--service-account-signing-key-file=/state/pki/sa.key",
				"--requestheader-client-ca-file=/state/pki/front-proxy-ca.crt", "--proxy-client-cert-file=/state/pki/front-proxy-client.crt",
				"--enable-aggregator-routing=true",
			},
			forbidden: []string{"--disable-admission-plugins", "--admission-control", "--anonymous-auth"},
		},
		{
			name: "kube-controller-manager",
			args: controllerManagerArgs(l),
			want: []string{
				"--controllers=*", "--use-service-account-credentials=true", "--leader-elect=false",
				"--service-account-private-key-file=/state/pki/sa.key", "--root-ca-file=/state/pki/ca.crt",
			},
		},
		{
			name: "kube-scheduler",
			args: schedulerArgs(l),
			want: []string{"--config=/state/kubeconfigs/kube-scheduler.yaml", "--secure-port=0"},
		},
		{
			name: "kwok",
			args: kwokArgs(l, "/bin"),
			want: []string{
				"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
				"--config=/bin/kwok-stages.yaml", "--node-lease-duration-seconds=40",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !slices.Contains(tt.args, w) {
					t.Errorf("args lack %s: %v", w, tt.args)
				}
			}
			for _, f := range tt.forbidden {
				if slices.ContainsFunc(tt.args, func(a string) bool { return strings.HasPrefix(a, f) }) {
					t.Errorf("args set %s: %v", f, tt.args)
				}
			}
		})
	}
}

func TestSchedulerConfig_disablesLeaderElectionAndNamesItsKubeconfig(t *testing.T) {
	l := layout("/state dir")
	data, err := yaml.ToJSON(schedulerConfig(l))
	if err != nil {
		t.Fatalf("scheduler configuration is not YAML: %v", err)
	}
	var cfg struct {
		Kind             string `json:"kind"`
		ClientConnection struct {
			Kubeconfig string `json:"kubeconfig"`
			QPS        int    `json:"qps"`
		} `json:"clientConnection"`
		LeaderElection struct {
			LeaderElect *bool `json:"leaderElect"`
		} `json:"leaderElection"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Kind != "KubeSchedulerConfiguration" {
		t.Errorf("kind = %q", cfg.Kind)
	}
	if want := l.componentKubeconfig(schedulerIdentity); cfg.ClientConnection.Kubeconfig != want {
		t.Errorf("kubeconfig = %q, want %q", cfg.ClientConnection.Kubeconfig, want)
	}
	if cfg.ClientConnection.QPS != clientQPS {
		t.Errorf("qps = %d, want %d", cfg.ClientConnection.QPS, clientQPS)
	}
	if cfg.LeaderElection.LeaderElect == nil || *cfg.LeaderElection.LeaderElect {
		t.Error("leaderElect is not false")
	}
}

func TestNodeAddressing_isDistinctPerNode(t *testing.T) {
	cidrs, ips := map[string]bool{}, map[string]bool{}
	for i := range maxNodes {
		cidrs[nodePodCIDR(i)] = true
		ips[nodeIP(i)] = true
	}
	if len(cidrs) != maxNodes || len(ips) != maxNodes {
		t.Errorf("%d pod CIDRs and %d node IPs for %d nodes, want all distinct", len(cidrs), len(ips), maxNodes)
	}
}

func TestNodePodCIDRIn(t *testing.T) {
	tests := []struct {
		name    string
		network string
		index   int
		want    string
		wantErr bool
	}{
		{name: "default range", network: podCIDR, index: 2, want: "10.244.2.0/24"},
		{name: "local test range", network: "198.18.0.0/16", index: 0, want: "198.18.0.0/24"},
		{name: "host bits are masked", network: "198.18.7.1/16", index: 1, want: "198.18.1.0/24"},
		{name: "not a /16", network: "198.18.0.0/24", wantErr: true},
		{name: "IPv6", network: "fd00::/16", wantErr: true},
		{name: "not a prefix", network: "198.18.0.0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nodePodCIDRIn(tt.network, tt.index)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("nodePodCIDRIn(%q, %d) = %q, %v; want %q, error %v", tt.network, tt.index, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
