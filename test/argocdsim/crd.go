package argocdsim

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// applicationCRD is Argo CD's Application CRD as Argo CD publishes it.
//
//go:embed crds/applications.yaml
var applicationCRD []byte

// InstallCRD applies Argo CD's Application CRD with server-side apply and
// waits until the API server serves it. c must know apiextensions.k8s.io/v1.
func InstallCRD(ctx context.Context, c client.Client) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(applicationCRD, crd); err != nil {
		return fmt.Errorf("reading the Application CRD: %w", err)
	}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := c.Patch(ctx, crd, client.Apply, client.FieldOwner("sluice-test-argocdsim"), client.ForceOwnership); err != nil { //nolint:staticcheck // typed apply of a whole object
		return fmt.Errorf("applying CRD %s: %w", crd.Name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			return false, nil //nolint:nilerr // not there yet: keep polling
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", crd.Name, err)
	}
	return nil
}
