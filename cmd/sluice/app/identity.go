package app

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// selfUser asks the API server who the manager is (a SelfSubjectReview):
// the Rollout webhook trusts this user to record approvals on behalf of
// the GitHub users and committers the GitOps adapter acts for.
func selfUser(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking the API server who sluice is: %w", err)
	}
	return r.Status.UserInfo.Username, nil
}
