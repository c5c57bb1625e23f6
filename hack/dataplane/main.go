// Command sluice-dataplane is a reduced build of the Traefik proxy for the
// data-plane tests (test/dataplane): one plain-HTTP entry point and the
// Kubernetes Gateway API provider, nothing else (no ACME, no plugins, no
// dashboard, no metrics). It reads the cluster from $KUBECONFIG, turns the
// Gateways, HTTPRoutes, Services and EndpointSlices it finds into Traefik's
// routers and weighted services, and proxies requests to the endpoints'
// addresses.
//
//	KUBECONFIG=... sluice-dataplane -address 127.0.0.1:18080 -namespace ns
//
// The Gateway's listener port must equal the port of -address, and its
// GatewayClass must name the controller traefik.io/gateway-controller.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
	ptypes "github.com/traefik/paerser/types"
	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	"github.com/traefik/traefik/v3/pkg/config/runtime"
	"github.com/traefik/traefik/v3/pkg/config/static"
	"github.com/traefik/traefik/v3/pkg/observability/metrics"
	"github.com/traefik/traefik/v3/pkg/provider/aggregator"
	"github.com/traefik/traefik/v3/pkg/provider/kubernetes/gateway"
	"github.com/traefik/traefik/v3/pkg/provider/traefik"
	"github.com/traefik/traefik/v3/pkg/proxy/httputil"
	"github.com/traefik/traefik/v3/pkg/safe"
	"github.com/traefik/traefik/v3/pkg/server"
	"github.com/traefik/traefik/v3/pkg/server/middleware"
	"github.com/traefik/traefik/v3/pkg/server/service"
	"github.com/traefik/traefik/v3/pkg/tcp"
	traefiktls "github.com/traefik/traefik/v3/pkg/tls"
)

// entryPoint names the one entry point; Gateway listeners bind to it by port.
const entryPoint = "web"

func main() {
	address := flag.String("address", "127.0.0.1:18080", "host:port the HTTP entry point listens on")
	namespaces := flag.String("namespace", "", "comma-separated namespaces to watch (default: all)")
	level := flag.String("log-level", "info", "log level: debug, info, warn, error")
	flag.Parse()

	if err := run(*address, *namespaces, *level); err != nil {
		fmt.Fprintln(os.Stderr, "sluice-dataplane:", err)
		os.Exit(1)
	}
}

func run(address, namespaces, level string) error {
	if os.Getenv("KUBECONFIG") == "" {
		return errors.New("KUBECONFIG must name the cluster's kubeconfig")
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return fmt.Errorf("log level: %w", err)
	}
	zerolog.SetGlobalLevel(lvl)
	log.Logger = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.RFC3339, NoColor: true}).With().Timestamp().Logger()

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	cfg := staticConfig(address, namespaces)
	cfg.SetEffectiveConfiguration()
	if err := cfg.ValidateConfiguration(); err != nil {
		return fmt.Errorf("static configuration: %w", err)
	}

	srv, err := newServer(ctx, cfg)
	if err != nil {
		return err
	}
	srv.Start(ctx)
	defer srv.Close()
	log.Info().Str("address", address).Msg("Data-plane proxy started")
	srv.Wait()
	return nil
}

// staticConfig is the whole static configuration: one entry point and the
// Gateway API provider.
func staticConfig(address, namespaces string) *static.Configuration {
	ep := &static.EntryPoint{Address: address}
	ep.SetDefaults()
	ep.AsDefault = true

	gw := &gateway.Provider{ThrottleDuration: ptypes.Duration(200 * time.Millisecond)}
	if namespaces != "" {
		gw.Namespaces = strings.Split(namespaces, ",")
	}
	return &static.Configuration{
		Global: &static.Global{},
		// The internal provider turns these into the "default" servers
		// transports the proxied services use.
		ServersTransport: &static.ServersTransport{
			MaxIdleConnsPerHost: 200,
			ForwardingTimeouts:  &static.ForwardingTimeouts{DialTimeout: ptypes.Duration(5 * time.Second)},
		},
		TCPServersTransport: &static.TCPServersTransport{DialTimeout: ptypes.Duration(5 * time.Second)},
		EntryPoints:         static.EntryPoints{entryPoint: ep},
		Providers: &static.Providers{
			ProvidersThrottleDuration: ptypes.Duration(200 * time.Millisecond),
			KubernetesGateway:         gw,
		},
	}
}

// newServer wires the provider, the configuration watcher and the HTTP
// router the way Traefik's own command does, without the parts the tests do
// not use.
func newServer(ctx context.Context, cfg *static.Configuration) (*server.Server, error) {
	pool := safe.NewPool(ctx)
	providers := aggregator.NewProviderAggregator(*cfg.Providers)
	// The internal provider supplies the default servers transport (and
	// TLS store) every proxied service refers to.
	if err := providers.AddProvider(traefik.New(*cfg)); err != nil {
		return nil, fmt.Errorf("internal provider: %w", err)
	}

	tlsManager := traefiktls.NewManager(nil)
	pool.GoCtx(tlsManager.Run)

	registry := metrics.NewMultiRegistry(nil)
	observability := middleware.NewObservabilityMgr(*cfg, registry, nil, nil, nil, nil)

	tcpEntryPoints, err := server.NewTCPEntryPoints(cfg.EntryPoints, cfg.HostResolver, registry)
	if err != nil {
		return nil, fmt.Errorf("entry points: %w", err)
	}
	udpEntryPoints, err := server.NewUDPEntryPoints(cfg.EntryPoints)
	if err != nil {
		return nil, fmt.Errorf("UDP entry points: %w", err)
	}

	transports := service.NewTransportManager(nil)
	proxies := httputil.NewProxyBuilder(transports, nil)
	dialers := tcp.NewDialerManager(nil)
	services := service.NewManagerFactory(*cfg, pool, observability, transports, proxies, nil)
	routers, err := server.NewRouterFactory(*cfg, services, tlsManager, observability, nil, dialers)
	if err != nil {
		return nil, fmt.Errorf("router factory: %w", err)
	}

	watcher := server.NewConfigurationWatcher(pool, providers, []string{entryPoint}, "internal")
	watcher.AddListener(func(conf dynamic.Configuration) {
		tlsManager.UpdateConfigs(ctx, conf.TLS.Stores, conf.TLS.Options, conf.TLS.Certificates)
	})
	watcher.AddListener(func(conf dynamic.Configuration) {
		transports.Update(conf.HTTP.ServersTransports)
		proxies.Update(conf.HTTP.ServersTransports)
		dialers.Update(conf.TCP.ServersTransports)
	})
	watcher.AddListener(func(conf dynamic.Configuration) {
		rt := runtime.NewConfig(conf)
		httpRouters, udpRouters := routers.CreateRouters(rt)
		tcpEntryPoints.Switch(httpRouters)
		udpEntryPoints.Switch(udpRouters)
		log.Info().Int("routers", len(conf.HTTP.Routers)).Int("services", len(conf.HTTP.Services)).Msg("Configuration applied")
		for name, r := range rt.Routers {
			log.Debug().Str("router", name).Interface("config", r.Router).Strs("errors", r.Err).Msg("Router")
		}
		for name, s := range rt.Services {
			log.Debug().Str("service", name).Interface("config", s.Service).Strs("errors", s.Err).Msg("Service")
		}
	})
	return server.NewServer(pool, tcpEntryPoints, udpEntryPoints, watcher, observability), nil
}
