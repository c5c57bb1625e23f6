package gitserver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Request is one HTTP request the server answered.
type Request struct {
	// Method and Path of the request (e.g. POST /app.git/git-upload-pack).
	Method, Path string
	// Status of the response.
	Status int
	// User is the basic-auth username sent, if any (never the password).
	User string
	// Wants, Haves and Shallows count the want, have and shallow lines of
	// an upload-pack request; Deepen is its "deepen" depth, 0 when none.
	Wants, Haves, Shallows, Deepen int
	// Objects is how many objects the pack sent holds; -1 when the
	// response carried no pack.
	Objects int
	// Bytes is the size of the response body.
	Bytes int64
}

// requestLog records the requests a server answers.
type requestLog struct {
	mu       sync.Mutex
	requests []Request
	// inFlight counts requests being answered: a client can have read the
	// whole response before the handler returns and is recorded.
	inFlight int
}

// settleTimeout bounds the wait for requests in flight to be recorded.
const settleTimeout = 10 * time.Second

// list returns the requests recorded, once those in flight are done (or
// after settleTimeout).
func (l *requestLog) list() []Request {
	deadline := time.Now().Add(settleTimeout)
	for {
		l.mu.Lock()
		if l.inFlight == 0 || time.Now().After(deadline) {
			out := append([]Request(nil), l.requests...)
			l.mu.Unlock()
			return out
		}
		l.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = nil
}

// maxCapture bounds what is kept of a request or response body to read the
// protocol lines and the pack header from.
const maxCapture = 1 << 20

// middleware records each request: the upload-pack lines the client sent
// and the pack header the server answered with.
func (l *requestLog) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.inFlight++
		l.mu.Unlock()
		rec := Request{Method: r.Method, Path: r.URL.Path, Objects: -1}
		defer func() {
			l.mu.Lock()
			l.requests = append(l.requests, rec)
			l.inFlight--
			l.mu.Unlock()
		}()
		rec.User, _, _ = r.BasicAuth()
		var body bytes.Buffer
		if r.Body != nil {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, &limitedWriter{buf: &body}), r.Body}
		}
		cw := &captureWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(cw, r)
		rec.Status = cw.status
		rec.Bytes = cw.n
		if strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			readUploadRequest(&rec, body.Bytes(), r.Header.Get("Content-Encoding") == "gzip")
			rec.Objects = packObjects(cw.head.Bytes())
		}
	})
}

// readUploadRequest counts the lines of an upload-pack request.
func readUploadRequest(rec *Request, body []byte, gzipped bool) {
	var rd io.Reader = bytes.NewReader(body)
	if gzipped {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return
		}
		rd = zr
	}
	br := bufio.NewReader(rd)
	for {
		var size [4]byte
		if _, err := io.ReadFull(br, size[:]); err != nil {
			return
		}
		n, err := strconv.ParseUint(string(size[:]), 16, 16)
		if err != nil {
			return
		}
		if n < 4 {
			continue // flush or delimiter
		}
		line := make([]byte, n-4)
		if _, err := io.ReadFull(br, line); err != nil {
			return
		}
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "want":
			rec.Wants++
		case "have":
			rec.Haves++
		case "shallow":
			rec.Shallows++
		case "deepen":
			if len(fields) > 1 {
				rec.Deepen, _ = strconv.Atoi(fields[1])
			}
		}
	}
}

// packObjects reads the object count from the header of the pack in an
// upload-pack response ("PACK", version 2 or 3, count), or -1.
func packObjects(resp []byte) int {
	for _, version := range []byte{2, 3} {
		sig := []byte{'P', 'A', 'C', 'K', 0, 0, 0, version}
		if i := bytes.Index(resp, sig); i >= 0 && len(resp) >= i+12 {
			return int(binary.BigEndian.Uint32(resp[i+8 : i+12]))
		}
	}
	return -1
}

// limitedWriter keeps the first maxCapture bytes written to it.
type limitedWriter struct{ buf *bytes.Buffer }

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := maxCapture - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// captureWriter counts the response and keeps its beginning.
type captureWriter struct {
	http.ResponseWriter
	status int
	n      int64
	head   bytes.Buffer
}

func (w *captureWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *captureWriter) Write(p []byte) (int, error) {
	if room := maxCapture - w.head.Len(); room > 0 {
		w.head.Write(p[:min(room, len(p))])
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Flush passes flushes on: the git handler streams the pack.
func (w *captureWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
