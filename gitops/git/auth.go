package git

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
)

// Auth holds the credentials for one repository. Fill in the fields of the
// URL's scheme only: HTTPS takes a username and password (or token), or a
// bearer token; SSH takes a private key and the known host keys.
type Auth struct {
	// Username and Password authenticate over HTTPS with basic auth. For an
	// access token put the token in Password; GitHub accepts any non-empty
	// username (x-access-token by convention), GitLab wants oauth2.
	// Without a username, "git" is sent.
	Username string
	// Password is the password or access token for basic auth.
	Password string
	// BearerToken is sent as "Authorization: Bearer <token>" over HTTPS,
	// for hosts whose tokens are not used with basic auth.
	BearerToken string
	// SSHPrivateKey is a PEM or OpenSSH private key, for ssh:// and
	// scp-like (git@host:path) URLs. The user is the URL's, "git" when the
	// URL names none.
	SSHPrivateKey []byte
	// SSHPassphrase decrypts SSHPrivateKey when it is encrypted.
	SSHPassphrase string
	// KnownHosts holds the server's host keys in known_hosts format. It is
	// required with SSH: an SSH server whose key is not listed is refused.
	KnownHosts []byte
}

// secrets lists what must never appear in an error.
func (a Auth) secrets() []string {
	return []string{a.Password, a.BearerToken, a.SSHPassphrase, string(a.SSHPrivateKey)}
}

// endpoint is a parsed repository URL with the transport settings for it.
type endpoint struct {
	ep   *transport.Endpoint
	auth transport.AuthMethod
	// display is the URL to name in errors: no user information.
	display string
}

// newEndpoint checks the URL and the credentials for it and builds the
// go-git auth method. Errors never quote a credential: a URL with a
// password in it is refused and named without it.
func newEndpoint(rawURL string, a Auth, allowHTTP bool) (endpoint, error) {
	if rawURL == "" {
		return endpoint{}, fmt.Errorf("%w: no repository URL", ErrInvalidOptions)
	}
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return endpoint{}, fmt.Errorf("%w: repository URL %q cannot be parsed", ErrInvalidOptions, redactURL(rawURL))
	}
	e := endpoint{ep: ep, display: displayURL(ep)}
	if ep.Password != "" {
		return endpoint{}, fmt.Errorf("%w: repository URL %s carries a password; give credentials in Auth", ErrInvalidOptions, e.display)
	}
	switch ep.Protocol {
	case "http":
		if !allowHTTP {
			return endpoint{}, fmt.Errorf("%w: repository URL %s is plain HTTP: commits and credentials could be read or changed on the way; use HTTPS, or allow insecure HTTP", ErrInvalidOptions, e.display)
		}
		e.auth, err = httpAuth(a, ep)
	case "https":
		e.auth, err = httpAuth(a, ep)
	case "ssh":
		e.auth, err = sshAuth(a, ep)
	default:
		return endpoint{}, fmt.Errorf("%w: repository URL %s: scheme %q is not supported; use https or ssh", ErrInvalidOptions, e.display, ep.Protocol)
	}
	if err != nil {
		return endpoint{}, fmt.Errorf("%w: repository %s: %w", ErrInvalidOptions, e.display, err)
	}
	return e, nil
}

func httpAuth(a Auth, ep *transport.Endpoint) (transport.AuthMethod, error) {
	if len(a.SSHPrivateKey) > 0 || len(a.KnownHosts) > 0 || a.SSHPassphrase != "" {
		return nil, fmt.Errorf("SSH credentials given for an %s URL", ep.Protocol)
	}
	if a.BearerToken != "" {
		if a.Username != "" || a.Password != "" {
			return nil, fmt.Errorf("both a bearer token and basic auth given; give one")
		}
		return &githttp.TokenAuth{Token: a.BearerToken}, nil
	}
	user := a.Username
	if user == "" {
		user = ep.User
	}
	if user == "" && a.Password == "" {
		return nil, nil // anonymous
	}
	if user == "" {
		user = "git"
	}
	return &githttp.BasicAuth{Username: user, Password: a.Password}, nil
}

func sshAuth(a Auth, ep *transport.Endpoint) (transport.AuthMethod, error) {
	if a.Username != "" || a.Password != "" || a.BearerToken != "" {
		return nil, fmt.Errorf("HTTP credentials given for an SSH URL")
	}
	if len(a.SSHPrivateKey) == 0 {
		return nil, fmt.Errorf("no SSH private key")
	}
	if len(a.KnownHosts) == 0 {
		return nil, fmt.Errorf("no known hosts: give the server's host keys")
	}
	user := ep.User
	if user == "" {
		user = "git"
	}
	keys, err := gitssh.NewPublicKeys(user, a.SSHPrivateKey, a.SSHPassphrase)
	if err != nil {
		// The ssh package's errors name the key type, never key material.
		return nil, fmt.Errorf("SSH private key: %w", err)
	}
	hosts, err := parseKnownHosts(a.KnownHosts)
	if err != nil {
		return nil, err
	}
	port := ep.Port
	if port == 0 {
		port = 22
	}
	addr := net.JoinHostPort(ep.Host, strconv.Itoa(port))
	keys.HostKeyCallback = hosts.callback()
	keys.HostKeyAlgorithms = hosts.algorithms(addr)
	if len(keys.HostKeyAlgorithms) == 0 {
		return nil, fmt.Errorf("known hosts list no key for %s", addr)
	}
	return keys, nil
}

// displayURL is the endpoint's URL without user information.
func displayURL(ep *transport.Endpoint) string {
	c := *ep
	c.User, c.Password = "", ""
	return c.String()
}

// redactURL hides the password of a URL that could not be parsed as an
// endpoint, as far as net/url can tell it apart.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "<unparsable URL>"
}
