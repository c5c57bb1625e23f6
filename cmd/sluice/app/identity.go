package app

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// selfUser asks the API server who the manager is (a SelfSubjectReview).
// The workload webhook lets only this user's writes through unheld as
// sluice's own, and the Rollout webhook trusts it to record approvals on
// behalf of the GitHub users and committers the GitOps adapter acts for.
// An empty answer (an anonymous manager) is an error: sluice could not tell
// its own writes from anyone's.
func selfUser(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking the API server who sluice is: %w", err)
	}
	if r.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("the API server names no user for sluice's credentials: give sluice an identity of its own (its ServiceAccount in a cluster)")
	}
	return r.Status.UserInfo.Username, nil
}
