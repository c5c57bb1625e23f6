package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// requestKey identifies one kind of API request: its verb, the resource it
// targets (namespaces and names stripped), the namespace it was sent to
// ("" for cluster-scoped requests), the HTTP status code it got (0 when
// no response arrived) and, for writes, whether its body was an empty patch.
type requestKey struct {
	Verb      string
	Resource  string
	Namespace string
	Code      int
	Empty     bool
}

// requestCounter counts the requests sent through the transports it wraps
// while its window is open.
type requestCounter struct {
	// log, when set, receives one line per request: time, verb, path,
	// code, resourceVersion of the response and, for writes, the body.
	log   io.Writer
	start time.Time

	mu     sync.Mutex // guards the fields below, and writes to log
	open   bool
	counts map[requestKey]requestStat
}

// requestStat is how many requests of one key were sent and how long they
// took in all, from sending to the response headers.
type requestStat struct {
	N    int
	Time time.Duration
}

// newRequestCounter returns a counter with its window closed that logs
// every request to log, if not nil.
func newRequestCounter(log io.Writer) *requestCounter {
	return &requestCounter{counts: map[requestKey]requestStat{}, log: log, start: time.Now()}
}

// wrap returns a transport that sends through next and counts into c; it
// fits rest.Config's WrapTransport, which every client of the manager calls.
func (c *requestCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return &countingTransport{next: next, counter: c}
}

// add counts one request that took d.
func (c *requestCounter) add(key requestKey, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open {
		st := c.counts[key]
		c.counts[key] = requestStat{N: st.N + 1, Time: st.Time + d}
	}
}

// openWindow clears the counts and starts counting.
func (c *requestCounter) openWindow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = map[requestKey]requestStat{}
	c.open = true
}

// snapshot returns a copy of the counts so far.
func (c *requestCounter) snapshot() map[requestKey]requestStat {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[requestKey]requestStat, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// countingTransport is one wrapped transport of a requestCounter.
type countingTransport struct {
	next    http.RoundTripper
	counter *requestCounter
}

// RoundTrip sends req and counts it once the response (or error) is back.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	key := requestKey{Verb: verbOf(req), Namespace: namespaceOf(req.URL.Path), Resource: resourceOf(req.URL.Path)}
	var body []byte
	if isWrite(req.Method) && req.GetBody != nil {
		if r, err := req.GetBody(); err == nil {
			body, _ = io.ReadAll(r)
			key.Empty = req.Method == http.MethodPatch && emptyPatch(body)
		}
	}
	sent := time.Now()
	resp, err := t.next.RoundTrip(req)
	took := time.Since(sent)
	if resp != nil {
		key.Code = resp.StatusCode
	}
	t.counter.add(key, took)
	if t.counter.log != nil && key.Verb != "WATCH" {
		t.logRequest(req, resp, body, took)
	}
	return resp, err
}

// logRequest writes one line about req to the counter's log. It buffers the
// response body to read its resourceVersion.
func (t *countingTransport) logRequest(req *http.Request, resp *http.Response, body []byte, took time.Duration) {
	code, rv := 0, ""
	if resp != nil {
		code = resp.StatusCode
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		var meta struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(b, &meta)
		rv = meta.Metadata.ResourceVersion
	}
	if len(body) > 2000 {
		body = append(body[:2000:2000], "..."...)
	}
	c := t.counter
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = fmt.Fprintf(c.log, "request %8.3fs %5.1fms %-6s %s %d rv=%s %s\n",
		time.Since(c.start).Seconds(), float64(took.Microseconds())/1000, req.Method, req.URL.Path, code, rv, body)
}

// mark writes a line with the time to the counter's log, if any, so that
// the request log can be lined up with the scenario.
func (c *requestCounter) mark(at time.Time, what string) {
	if c.log == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = fmt.Fprintf(c.log, "mark    %8.3fs %s\n", at.Sub(c.start).Seconds(), what)
}
