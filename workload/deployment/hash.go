package deployment

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// templateHash is the pod-template-hash Kubernetes' Deployment controller
// gives the ReplicaSet of a pod template: FNV-32a over the template's
// hash-dump, plus the collision count when set, encoded with the safe
// alphabet. sluice uses it to name a revision before its ReplicaSet exists;
// ReplicaSets are always matched by template, never by this value.
func templateHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount)) //nolint:gosec // same bits as Kubernetes
		_, _ = h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}
