package app

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// secretReader reads Secrets through reader, uncached: sluice is granted
// get on Secrets, not list or watch. The metric providers and the
// notification sinks read their credentials with it.
func secretReader(reader client.Reader) func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
		s := &corev1.Secret{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
			return nil, err
		}
		return s, nil
	}
}
