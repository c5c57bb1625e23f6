// Package helm tests the Helm chart charts/sluice for real: helm lint and
// helm template with several value sets, the rendered manifests checked
// against what sluice generates (CRDs, RBAC, webhook configurations),
// applied with a server-side dry run and then for real to a local control
// plane, and the manager run with the credentials of the chart's
// ServiceAccount through a full release, every API call it makes recorded
// and compared with the chart's RBAC.
package helm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
)

// suite is what the tests share.
var suite struct {
	cfg  *rest.Config
	c    client.Client
	kube kubernetes.Interface
	// root is the repository; helm the pinned helm binary.
	root, helm string
	// kubeVersion is the control plane's version, for helm template.
	kubeVersion string
	// kubeconfig is the control plane's, for helm install.
	kubeconfig string
}

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		var err error
		if suite.root, err = filepath.Abs("../.."); err != nil {
			return err
		}
		if suite.helm, err = helmBinary(suite.root); err != nil {
			return err
		}
		suite.cfg, suite.kubeconfig = c.RESTConfig(), c.KubeconfigPath()
		scheme, err := app.Scheme()
		if err != nil {
			return err
		}
		if err := apiextensionsv1.AddToScheme(scheme); err != nil {
			return err
		}
		if suite.c, err = client.New(suite.cfg, client.Options{Scheme: scheme}); err != nil {
			return err
		}
		if suite.kube, err = kubernetes.NewForConfig(suite.cfg); err != nil {
			return err
		}
		v, err := suite.kube.Discovery().ServerVersion()
		if err != nil {
			return err
		}
		suite.kubeVersion = v.GitVersion
		return nil
	}))
}

// helmVersionLine is how the Makefile pins helm.
var helmVersionLine = regexp.MustCompile(`(?m)^HELM_VERSION := (v\S+)$`)

// helmBinary returns bin/helm-<version> of the version the Makefile pins,
// building it as the Makefile does when it is missing.
func helmBinary(root string) (string, error) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	m := helmVersionLine.FindSubmatch(mk)
	if m == nil {
		return "", fmt.Errorf("no HELM_VERSION in the Makefile")
	}
	bin := filepath.Join(root, "bin", "helm-"+string(m[1]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.CommandContext(context.Background(), "make", "-C", root, "helm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building helm: %v\n%s", err, out)
	}
	return bin, nil
}
