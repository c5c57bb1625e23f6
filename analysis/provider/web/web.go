// Package web measures a metric by calling an HTTP endpoint and reading a
// value from its JSON answer with a kubectl-style JSONPath.
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/util/jsonpath"

	"github.com/sluice-dev/sluice/analysis/provider"
	"github.com/sluice-dev/sluice/analysis/vars"
	"github.com/sluice-dev/sluice/analysis/verdict"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

// DefaultTimeout bounds a request whose metric sets none.
const DefaultTimeout = 10 * time.Second

// MaxBody is the largest answer read, in bytes.
const MaxBody = 1 << 20

// Provider calls HTTP endpoints.
type Provider struct {
	// Secrets reads headersSecretRef.
	Secrets provider.SecretReader
	// Client sends the requests (nil: a client on http.DefaultTransport).
	Client *http.Client
}

var _ provider.Provider = (*Provider)(nil)

// Measure calls the metric's URL and selects the result in its answer.
func (p *Provider) Measure(ctx context.Context, q provider.Query) (provider.Result, error) {
	spec := q.Metric.Provider.Web
	if spec == nil {
		return provider.Result{}, errors.New("the metric has no web provider")
	}
	path, err := Compile(spec.JSONPath)
	if err != nil {
		return provider.Result{}, fmt.Errorf("jsonPath: %w", err)
	}
	req, err := p.request(ctx, q, spec)
	if err != nil {
		return provider.Result{}, err
	}
	timeout := spec.Timeout.Duration
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := p.Client
	if client == nil {
		client = &http.Client{}
	}
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return provider.Result{}, fmt.Errorf("calling %s: %w", req.URL.Redacted(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return provider.Result{}, fmt.Errorf("reading the answer of %s: %w", req.URL.Redacted(), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Result{}, fmt.Errorf("%s answered %s: %s", req.URL.Redacted(), resp.Status, verdict.Truncate(strings.TrimSpace(string(body)), 200))
	}
	if len(body) > MaxBody {
		return provider.Result{}, fmt.Errorf("the answer of %s is larger than %d bytes", req.URL.Redacted(), MaxBody)
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return provider.Result{}, fmt.Errorf("the answer of %s is not JSON: %w", req.URL.Redacted(), err)
	}
	v, err := Select(path, doc)
	if err != nil {
		return provider.Result{}, fmt.Errorf("jsonPath %s: %w", spec.JSONPath, err)
	}
	return provider.Result{Value: v}, nil
}

func (p *Provider) request(ctx context.Context, q provider.Query, spec *analysisv1alpha1.WebMetric) (*http.Request, error) {
	url, err := vars.Expand(spec.URL, q.Vars)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	method := spec.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if spec.Body != "" {
		b, err := vars.Expand(spec.Body, q.Vars)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		body = bytes.NewBufferString(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range spec.Headers {
		v, err := vars.Expand(h.Value, q.Vars)
		if err != nil {
			return nil, fmt.Errorf("headers[%s]: %w", h.Name, err)
		}
		req.Header.Set(h.Name, v)
	}
	if ref := spec.HeadersSecretRef; ref != nil {
		s, err := p.Secrets(ctx, q.Gate.Namespace, ref.Name)
		if err != nil {
			return nil, fmt.Errorf("reading headersSecretRef %s: %w", ref.Name, err)
		}
		keys := make([]string, 0, len(s.Data))
		for k := range s.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			req.Header.Set(k, strings.TrimSpace(string(s.Data[k])))
		}
	}
	return req, nil
}

// Compile parses a JSONPath in kubectl's syntax; the braces may be left
// out (".data.value" is "{.data.value}"). An empty path selects the whole
// document.
func Compile(path string) (*jsonpath.JSONPath, error) {
	if strings.TrimSpace(path) == "" {
		return nil, nil //nolint:nilnil // no path: the whole document
	}
	if !strings.HasPrefix(strings.TrimSpace(path), "{") {
		path = "{" + path + "}"
	}
	jp := jsonpath.New("jsonPath")
	if err := jp.Parse(path); err != nil {
		return nil, err
	}
	return jp, nil
}

// Select returns what path selects in doc: one value as it is, several as
// a list. A path that selects nothing is an error.
func Select(path *jsonpath.JSONPath, doc any) (any, error) {
	if path == nil {
		return doc, nil
	}
	results, err := path.FindResults(doc)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, rs := range results {
		for _, r := range rs {
			if r.IsValid() && r.CanInterface() {
				out = append(out, r.Interface())
			} else {
				out = append(out, nil)
			}
		}
	}
	switch len(out) {
	case 0:
		return nil, errors.New("selects nothing in the answer")
	case 1:
		return out[0], nil
	}
	return out, nil
}
