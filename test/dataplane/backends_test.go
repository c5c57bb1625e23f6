package dataplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podPort is the port every pod serves on; the Services' targetPort.
const podPort = 8080

// podServer answers on one pod IP with the image of the pod that holds the
// IP now (kwok may hand a freed IP to a new pod).
type podServer struct {
	image atomic.Pointer[string]
	srv   *http.Server
}

func (s *podServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	image := *s.image.Load()
	w.WriteHeader(podAnswer(image)) // analysis_test.go: some images fail some requests
	_, _ = io.WriteString(w, image)
}

// servePods runs until ctx ends: every 100ms it lists the pods, starts a
// server on IP:podPort for each pod that has an IP and is not terminating,
// points it at the pod's image, and stops the servers whose pod is gone.
// Kubernetes publishes a pod in EndpointSlices only once it is Ready, which
// kwok marks it at once, so a server must stand by then: the tests wait for
// the proxy to answer from the expected revisions before they measure.
func servePods(ctx context.Context, c client.Client) {
	servers := map[string]*podServer{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods); err == nil {
			live := map[string]string{}
			for _, p := range pods.Items {
				if p.Status.PodIP != "" && p.DeletionTimestamp == nil && len(p.Spec.Containers) > 0 {
					live[p.Status.PodIP] = p.Spec.Containers[0].Image
				}
			}
			reconcileServers(servers, live)
		}
		select {
		case <-ctx.Done():
			reconcileServers(servers, nil)
			return
		case <-tick.C:
		}
	}
}

// reconcileServers makes servers match live (pod IP -> image).
func reconcileServers(servers map[string]*podServer, live map[string]string) {
	for ip, s := range servers {
		if _, ok := live[ip]; !ok {
			_ = s.srv.Close()
			delete(servers, ip)
		}
	}
	for ip, image := range live {
		if s, ok := servers[ip]; ok {
			s.image.Store(&image)
			continue
		}
		s, err := startPodServer(ip, image)
		if err != nil {
			fmt.Fprintf(os.Stderr, "dataplane: serving pod %s: %v\n", ip, err)
			continue
		}
		servers[ip] = s
	}
}

func startPodServer(ip, image string) (*podServer, error) {
	l, err := net.Listen("tcp4", net.JoinHostPort(ip, strconv.Itoa(podPort)))
	if err != nil {
		return nil, err
	}
	s := &podServer{}
	s.image.Store(&image)
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "dataplane: pod server %s: %v\n", ip, err)
		}
	}()
	return s, nil
}
