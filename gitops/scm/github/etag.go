package github

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/sluice-dev/sluice/internal/bounded"
)

// maxCachedBody caps the size of a response kept for conditional requests.
const maxCachedBody = 1 << 20

// cachedResponse is a GET response kept with its ETag.
type cachedResponse struct {
	etag   string
	header http.Header
	body   []byte
}

// etagTransport makes every GET conditional on the ETag of the last response to the same URL:
// a 304 (which GitHub does not count against the rate limit) is answered with the kept body, as
// the 200 it stands for, so the client above sees no difference. At most size responses are
// kept; the oldest goes first.
type etagTransport struct {
	next http.RoundTripper
	size int

	once sync.Once
	kept *bounded.Map[string, *cachedResponse]
}

// RoundTrip implements http.RoundTripper.
func (t *etagTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" {
		return t.next.RoundTrip(req)
	}
	key := req.Header.Get("Accept") + " " + req.URL.String()
	cached := t.get(key)
	if cached != nil {
		req = req.Clone(req.Context())
		req.Header.Set("If-None-Match", cached.etag)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && cached != nil:
		_ = resp.Body.Close()
		return fromCache(req, resp, cached), nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxCachedBody+1))
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		if len(data) <= maxCachedBody {
			t.put(key, &cachedResponse{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: data})
		}
	}
	return resp, nil
}

// fromCache builds the 200 a 304 stands for: the kept body and headers, updated with the 304's
// own headers (rate limits, date).
func fromCache(req *http.Request, notModified *http.Response, cached *cachedResponse) *http.Response {
	header := cached.header.Clone()
	for k, v := range notModified.Header {
		header[k] = v
	}
	header.Set("Content-Length", strconv.Itoa(len(cached.body)))
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         notModified.Proto,
		ProtoMajor:    notModified.ProtoMajor,
		ProtoMinor:    notModified.ProtoMinor,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(cached.body)),
		ContentLength: int64(len(cached.body)),
		Request:       req,
	}
}
func (t *etagTransport) responses() *bounded.Map[string, *cachedResponse] {
	t.once.Do(func() { t.kept = bounded.New[string, *cachedResponse](t.size) })
	return t.kept
}

func (t *etagTransport) get(key string) *cachedResponse {
	c, _ := t.responses().Get(key)
	return c
}

func (t *etagTransport) put(key string, c *cachedResponse) { t.responses().Put(key, c) }
