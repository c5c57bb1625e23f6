package revisions

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// TemplateHash is the hash Kubernetes gives a new revision of a pod
// template: the pod-template-hash of a Deployment's ReplicaSet, the
// controller-revision-hash of a DaemonSet's ControllerRevision. It is
// FNV-32a over the template's hash-dump, plus the collision count when
// set, encoded with the safe alphabet. sluice uses it to name a revision
// before its ReplicaSet or ControllerRevision exists; revisions are always
// matched by template, never by this value.
func TemplateHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount)) //nolint:gosec // same bits as Kubernetes
		_, _ = h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}
