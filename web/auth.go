package web

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Auth guards the web view with one shared token. Clients send it as a
// bearer token (Authorization: Bearer <token>) or, from a browser, as the
// password of basic auth with any user name. An empty Token lets everyone
// in.
type Auth struct {
	// Token is the shared secret; never logged or shown.
	Token string
}

// Allows reports whether r carries the token.
func (a Auth) Allows(r *http.Request) bool {
	if a.Token == "" {
		return true
	}
	var given string
	if _, pass, ok := r.BasicAuth(); ok {
		given = pass
	} else if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		given = strings.TrimSpace(v)
	}
	return subtle.ConstantTimeCompare([]byte(given), []byte(a.Token)) == 1
}

// Wrap answers 401 to requests without the token and passes the others to
// next.
func (a Auth) Wrap(next http.Handler) http.Handler {
	if a.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.Allows(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="sluice", charset="UTF-8"`)
			http.Error(w, "unauthorized: give the web view token as a bearer token or as the basic auth password", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
