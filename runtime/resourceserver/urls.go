package resourceserver

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// wellKnownPath is the RFC 9728 well-known path prefix.
const wellKnownPath = "/.well-known/oauth-protected-resource"

// checkURL parses raw as an absolute URL that is https, or http on a
// loopback host (a local authorization server, tests): tokens and keys
// fetched in clear from anywhere else could be read or replaced on the
// way. A URL with user info or a fragment is refused; query says whether
// a query is allowed (an issuer has none, RFC 8414 section 2).
func checkURL(what, raw string, query bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error would quote raw, user info and all.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s: not a URL: %v", what, err)
	}
	if u.User != nil {
		// Said without the URL: its user info may be a password.
		u.User = nil
		return nil, fmt.Errorf("%s %q: user info not allowed", what, u.String())
	}
	switch {
	case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return nil, fmt.Errorf("%s %q: want an absolute https URL", what, raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fmt.Errorf("%s %q: a fragment in the URL", what, raw)
	case !query && (u.RawQuery != "" || u.ForceQuery):
		return nil, fmt.Errorf("%s %q: a query in the URL", what, raw)
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return nil, fmt.Errorf("%s %q: must be https (http only on a loopback host)", what, raw)
	}
	return u, nil
}

// isLoopback: localhost, or an address of 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// canonicalResource is the form resource identifiers are compared in:
// scheme and host lowercased, and no trailing slash on an empty path
// (RFC 8707 names the resource by URI; the MCP specification asks that
// case in scheme and host, and that slash, make no difference).
func canonicalResource(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if u.Path == "/" && u.RawQuery == "" {
		u.Path = ""
	}
	return u.String()
}

// metadataURLs are the resource's protected resource metadata URL (RFC
// 9728 section 3.1: the well-known path inserted between the host and the
// resource's path) and the paths this server answers it on: that one and
// the root form, which the MCP specification lets clients try second.
func metadataURLs(resource *url.URL) (metadataURL string, paths []string) {
	path := strings.TrimSuffix(resource.Path, "/")
	u := url.URL{Scheme: resource.Scheme, Host: resource.Host, Path: wellKnownPath + path}
	if path == "" {
		return u.String(), []string{wellKnownPath}
	}
	return u.String(), []string{wellKnownPath + path, wellKnownPath}
}

// validScope: a scope token is NQCHAR, RFC 6749 section 3.3 (and so safe
// in a quoted-string of WWW-Authenticate).
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
			return false
		}
	}
	return true
}
