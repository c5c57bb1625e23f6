// Package providers is the one place that knows every kind of traffic
// route: it builds the providers of a Rollout's trafficRoutings entry, and
// says what each can express, for admission and for the Supported
// condition. A new kind of route (a Lua-scripted custom object) is added
// here and nowhere else.
package providers

import (
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/gateway"
	"github.com/sluice-dev/sluice/traffic/ingress"
	"github.com/sluice-dev/sluice/traffic/lua"
	"github.com/sluice-dev/sluice/traffic/service"
)

// Routes reports whether this version of sluice routes traffic for the
// entry ref: it names an Ingress of a built-in class, an HTTPRoute or
// custom objects (customNetworkRefs, scripted in Lua). Entries it does not
// route are left alone entirely (their Services too).
func Routes(ref rolloutsv1beta1.TrafficRoutingRef) bool {
	return (ref.Ingress != nil && ingress.Supported(ref.Ingress.ClassType)) || ref.Gateway != nil || len(ref.CustomNetworkRefs) > 0
}

// Unsupported lists the parts of the entry ref (at path, e.g.
// spec.strategy.canary.trafficRoutings[0]) that this version of sluice
// stores but does not act on.
func Unsupported(path string, ref rolloutsv1beta1.TrafficRoutingRef) []string {
	var out []string
	if ref.Ingress != nil && !ingress.Supported(ref.Ingress.ClassType) {
		out = append(out, fmt.Sprintf("%s.ingress.classType %q (built in: nginx, higress, mse, aliyun-alb; classes scripted in Lua are not supported yet)",
			path, ref.Ingress.ClassType))
	}
	return out
}

// Check returns why the routes of the entry ref cannot express the traffic
// of a step (its matches, together with its weight); nil when they can.
func Check(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) error {
	var errs []error
	if ref.Ingress != nil && ingress.Supported(ref.Ingress.ClassType) {
		if err := ingress.Check(ref.Ingress.ClassType, s); err != nil {
			errs = append(errs, fmt.Errorf("ingress %s (class %s): %w", ref.Ingress.Name, classOf(ref.Ingress), err))
		}
	}
	if ref.Gateway != nil && ref.Gateway.HTTPRouteName != nil {
		if err := gateway.Check(s); err != nil {
			errs = append(errs, fmt.Errorf("HTTPRoute %s: %w", *ref.Gateway.HTTPRouteName, err))
		}
	}
	return errors.Join(errs...)
}

// Ignores lists what of a step's traffic the routes of the entry ref
// cannot apply and leave without effect (e.g. a request header modifier on
// nginx), naming the route.
func Ignores(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) []string {
	var out []string
	if ref.Ingress != nil {
		if why := ingress.Ignores(ref.Ingress.ClassType, s); why != "" {
			out = append(out, fmt.Sprintf("ingress %s (class %s): %s", ref.Ingress.Name, classOf(ref.Ingress), why))
		}
	}
	return out
}

func classOf(i *rolloutsv1beta1.IngressTrafficRouting) string {
	if i.ClassType == "" {
		return ingress.ClassNginx
	}
	return i.ClassType
}

// New returns the providers of the entry t.Ref, in the order they are
// driven. It reads through reader (not a cache) and writes through c. It
// fails, wrapping traffic.ErrUnsupported, when the entry names nothing this
// version routes.
func New(c client.Client, reader client.Reader, t traffic.Target) ([]traffic.Provider, error) {
	var out []traffic.Provider
	// Custom objects first, as OpenKruise Rollouts drives them.
	for _, ref := range t.Ref.CustomNetworkRefs {
		p, err := lua.New(c, reader, t, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if t.Ref.Ingress != nil && ingress.Supported(t.Ref.Ingress.ClassType) {
		p, err := ingress.New(c, reader, t)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if t.Ref.Gateway != nil {
		p, err := gateway.New(c, reader, t)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no route sluice drives for Service %s: set ingress, gateway.httpRouteName or customNetworkRefs: %w", t.Ref.Service, traffic.ErrUnsupported)
	}
	return out, nil
}

// Services returns the Services of the entry t.Ref.
func Services(c client.Client, reader client.Reader, t traffic.Target) traffic.Services {
	return service.New(c, reader, t)
}
