package githubfake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxJWTLifetime is the longest App JWT GitHub accepts (ten minutes, plus a minute of drift).
const maxJWTLifetime = 11 * time.Minute

// AddApp registers a GitHub App (by id and client id) installed once (installationID) whose
// JWTs are signed with the private half of key. Installation tokens it issues act as login
// "<slug>[bot]" and live for ttl.
func (s *Server) AddApp(appID int64, clientID string, installationID int64, key *rsa.PublicKey, slug string, ttl time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apps[installationID] = &app{id: appID, clientID: clientID, installationID: installationID, key: key, tokenTTL: ttl}
	s.appSlugs[installationID] = slug
}

// authenticateApp checks the App JWT of an /app request: the JWT of the App of the
// installation the path names, or, for a path that names none (GET /app), of any App.
func (s *Server) authenticateApp(c *call) error {
	token, ok := strings.CutPrefix(c.req.Header.Get("Authorization"), "Bearer ")
	if _, named := c.params["installation_id"]; !named {
		if !ok {
			return fail(http.StatusUnauthorized, "A JSON web token could not be decoded")
		}
		var last error = jwtError("A JSON web token could not be decoded")
		for _, a := range s.apps {
			if last = verifyJWT(token, a, s.clock()); last == nil {
				c.app = a
				return nil
			}
		}
		return fail(http.StatusUnauthorized, "%s", last.Error())
	}
	id, err := strconv.ParseInt(c.params["installation_id"], 10, 64)
	if err != nil {
		return fail(http.StatusNotFound, "Not Found")
	}
	a := s.apps[id]
	if a == nil {
		return fail(http.StatusNotFound, "Not Found")
	}
	if !ok {
		return fail(http.StatusUnauthorized, "A JSON web token could not be decoded")
	}
	if err := verifyJWT(token, a, s.clock()); err != nil {
		return fail(http.StatusUnauthorized, "%s", err.Error())
	}
	c.app = a
	return nil
}

// verifyJWT checks an App JWT: RS256 signed by the App's key, issued by the App, valid now,
// and not longer than GitHub allows.
func verifyJWT(token string, a *app, now time.Time) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return jwtError("A JSON web token could not be decoded")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil || header.Alg != "RS256" {
		return jwtError("A JSON web token could not be decoded")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return jwtError("A JSON web token could not be decoded")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(a.key, crypto.SHA256, digest[:], sig) != nil {
		return jwtError("A JSON web token could not be decoded")
	}
	var claims struct {
		Iat int64 `json:"iat"`
		Exp int64 `json:"exp"`
		Iss any   `json:"iss"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return jwtError("A JSON web token could not be decoded")
	}
	iss := ""
	switch v := claims.Iss.(type) {
	case string:
		iss = v
	case float64:
		iss = strconv.FormatInt(int64(v), 10)
	}
	if iss != strconv.FormatInt(a.id, 10) && (a.clientID == "" || iss != a.clientID) {
		return jwtError("'Issuer' claim ('iss') must be an Integer or the client ID")
	}
	iat, exp := time.Unix(claims.Iat, 0), time.Unix(claims.Exp, 0)
	if !now.Before(exp) || iat.After(now.Add(time.Minute)) {
		return jwtError("'Expiration time' claim ('exp') is too far in the future or in the past")
	}
	if exp.Sub(iat) > maxJWTLifetime {
		return jwtError("'Expiration time' claim ('exp') is too far in the future")
	}
	return nil
}

type jwtError string

func (e jwtError) Error() string { return string(e) }

func decodeSegment(seg string, v any) error {
	data, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func (s *Server) createInstallationToken(c *call) (int, any, error) {
	id, _ := strconv.ParseInt(c.params["installation_id"], 10, 64)
	a := s.apps[id]
	var in struct {
		Repositories []string `json:"repositories"`
	}
	if len(c.body) > 0 {
		if err := decode(c, &in); err != nil {
			return 0, nil, err
		}
	}
	buf := make([]byte, 20)
	if _, err := rand.Read(buf); err != nil {
		return 0, nil, err
	}
	token := "ghs_" + hex.EncodeToString(buf)
	expires := s.clock().Add(a.tokenTTL).Truncate(time.Second)
	s.tokens[token] = tokenInfo{login: s.appSlugs[id] + "[bot]", expires: expires, repos: in.Repositories, app: a.id}
	return http.StatusCreated, map[string]any{
		"token": token, "expires_at": stamp(expires), "repository_selection": "all",
		"permissions": map[string]any{"statuses": "write", "pull_requests": "write", "contents": "write", "metadata": "read"},
	}, nil
}

// InstallationTokens returns how many installation tokens the fake issued.
func (s *Server) InstallationTokens() int {
	return s.Count("apps/create-installation-access-token")
}

// RevokeInstallationTokens makes every installation token issued so far invalid (as when an
// App's installation is suspended and resumed).
func (s *Server) RevokeInstallationTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for token, info := range s.tokens {
		if !info.expires.IsZero() {
			delete(s.tokens, token)
		}
	}
}
