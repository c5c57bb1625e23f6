package gitopsworld

import "fmt"

// The manifests of the stories' application, "checkout": four pods of
// image shop/checkout:<tag>, released by a Rollout in steps of 1 pod
// (paused), 2 pods (paused) and all.

// DeploymentYAML is the manifest of the Deployment at image tag.
func DeploymentYAML(tag string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
spec:
  replicas: 4
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      containers:
      - name: app
        image: shop/checkout:%s
`, tag)
}

// StatefulSetYAML is the manifest of a StatefulSet at image tag. It sets no
// partition: sluice owns that field during a release.
func StatefulSetYAML(tag string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: checkout
spec:
  replicas: 4
  serviceName: checkout
  podManagementPolicy: Parallel
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      containers:
      - name: app
        image: shop/checkout:%s
`, tag)
}

// RolloutYAML is the manifest of the Rollout of the workload of kind
// (Deployment or StatefulSet) named checkout: steps 1 pod (paused), 2 pods
// (paused), all.
func RolloutYAML(kind string) string {
	return fmt.Sprintf(`apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata:
  name: checkout
  labels: {app: checkout}
spec:
  workloadRef: {apiVersion: apps/v1, kind: %s, name: checkout}
  strategy:
    canary:
      steps:
      - replicas: 1
      - replicas: 2
      - replicas: 100%%
`, kind)
}
