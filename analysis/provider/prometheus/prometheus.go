// Package prometheus measures a metric with an instant PromQL query through
// the Prometheus HTTP API (/api/v1/query).
package prometheus

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/utils/clock"

	"github.com/sluice-dev/sluice/analysis/provider"
	"github.com/sluice-dev/sluice/analysis/vars"
)

// Secret keys read from spec...prometheus.secretRef.
const (
	// KeyBearerToken is sent as "Authorization: Bearer <token>".
	KeyBearerToken = "bearerToken"
	// KeyUsername and KeyPassword are sent as basic authentication.
	KeyUsername = "username"
	// KeyPassword goes with KeyUsername.
	KeyPassword = "password"
	// KeyCA holds PEM certificates to trust for HTTPS.
	KeyCA = "ca.crt"
)

// DefaultTimeout bounds a query whose metric sets none.
const DefaultTimeout = 10 * time.Second

// Provider runs PromQL queries.
type Provider struct {
	// Secrets reads the credentials.
	Secrets provider.SecretReader
	// Transport sends the requests (nil: http.DefaultTransport).
	Transport http.RoundTripper
	// Clock gives the query's evaluation time.
	Clock clock.PassiveClock
}

var _ provider.Provider = (*Provider)(nil)

// Measure runs the metric's query at the present time.
func (p *Provider) Measure(ctx context.Context, q provider.Query) (provider.Result, error) {
	spec := q.Metric.Provider.Prometheus
	if spec == nil {
		return provider.Result{}, errors.New("the metric has no prometheus provider")
	}
	query, err := vars.Expand(spec.Query, q.Vars)
	if err != nil {
		return provider.Result{}, fmt.Errorf("query: %w", err)
	}
	rt, err := p.transport(ctx, q)
	if err != nil {
		return provider.Result{}, err
	}
	client, err := promapi.NewClient(promapi.Config{Address: spec.Address, RoundTripper: rt})
	if err != nil {
		return provider.Result{}, fmt.Errorf("address %q: %w", spec.Address, err)
	}
	timeout := spec.Timeout.Duration
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	val, _, err := promv1.NewAPI(client).Query(ctx, query, p.Clock.Now(), promv1.WithTimeout(timeout))
	if err != nil {
		return provider.Result{}, fmt.Errorf("querying %s: %w", spec.Address, err)
	}
	v, err := Value(val)
	return provider.Result{Value: v}, err
}

// Value turns a query's result into the value conditions read: a scalar
// or a vector of one sample is a number, a vector of several a list of
// numbers, a string a string. A vector of no sample is an error (nothing
// matched: no traffic yet, or labels that match no series; "or vector(0)"
// makes it 0), and so is a matrix (a range query).
func Value(v model.Value) (any, error) {
	switch x := v.(type) {
	case *model.Scalar:
		return float64(x.Value), nil
	case model.Vector:
		if len(x) == 0 {
			return nil, errors.New("the query matched no series (no samples yet, or labels that match nothing)")
		}
		if len(x) == 1 {
			return float64(x[0].Value), nil
		}
		out := make([]any, 0, len(x))
		for _, s := range x {
			out = append(out, float64(s.Value))
		}
		return out, nil
	case *model.String:
		return x.Value, nil
	case model.Matrix:
		return nil, errors.New("the query gives a range vector: use an instant query (wrap it in an aggregation or drop the [range])")
	}
	return nil, fmt.Errorf("the query gives an unexpected %T", v)
}

// transport adds the credentials of the metric's Secret.
func (p *Provider) transport(ctx context.Context, q provider.Query) (http.RoundTripper, error) {
	base := p.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	ref := q.Metric.Provider.Prometheus.SecretRef
	if ref == nil {
		return base, nil
	}
	s, err := p.Secrets(ctx, q.Gate.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("reading secretRef %s: %w", ref.Name, err)
	}
	if ca := s.Data[KeyCA]; len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("secretRef %s: %s holds no PEM certificate", ref.Name, KeyCA)
		}
		t, ok := http.DefaultTransport.(*http.Transport)
		if !ok {
			return nil, errors.New("the default transport is not an *http.Transport")
		}
		t = t.Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		base = t
	}
	a := &auth{base: base}
	switch {
	case len(s.Data[KeyBearerToken]) > 0:
		a.bearer = string(s.Data[KeyBearerToken])
	case len(s.Data[KeyUsername]) > 0:
		a.user, a.password = string(s.Data[KeyUsername]), string(s.Data[KeyPassword])
	case len(s.Data[KeyCA]) == 0:
		return nil, fmt.Errorf("secretRef %s has none of %s, %s/%s, %s", ref.Name, KeyBearerToken, KeyUsername, KeyPassword, KeyCA)
	}
	return a, nil
}

// auth adds a bearer token or basic credentials to each request.
type auth struct {
	base           http.RoundTripper
	bearer         string
	user, password string
}

func (a *auth) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	switch {
	case a.bearer != "":
		req.Header.Set("Authorization", "Bearer "+a.bearer)
	case a.user != "":
		req.SetBasicAuth(a.user, a.password)
	}
	return a.base.RoundTrip(req)
}
