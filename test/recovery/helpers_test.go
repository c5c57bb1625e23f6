package recovery

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/sluice-dev/sluice/test/poll"
)

func ctxFor(t *testing.T) context.Context { return poll.Context(t) }

// eventually polls cond until it holds, failing at poll's deadline.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	name := prefix + "-" + rand.String(6)
	if err := suite.c.Create(ctxFor(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "default ServiceAccount", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	})
	return name
}
