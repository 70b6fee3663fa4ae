package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// TestStatusGuard: without a token or OAuth the status page is for
// loopback clients only; with -http-token-file it takes the token; a
// request with an Origin (a page of some site) is refused either way.
func TestStatusGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	open := (&httpListener{}).protectStatus(ok)
	withToken := (&httpListener{so: streamhttp.ServeOptions{Options: streamhttp.Options{Authorize: streamhttp.BearerToken("tok")}}}).protectStatus(ok)
	for _, c := range []struct {
		name       string
		h          http.Handler
		remote     string
		auth, orig string
		want       int
	}{
		{"loopback", open, "127.0.0.1:5000", "", "", 200},
		{"loopback v6", open, "[::1]:5000", "", "", 200},
		{"beyond loopback", open, "192.0.2.7:5000", "", "", 403},
		{"an origin", open, "127.0.0.1:5000", "", "http://evil.example", 403},
		{"no token", withToken, "192.0.2.7:5000", "", "", 401},
		{"wrong token", withToken, "127.0.0.1:5000", "Bearer nope", "", 401},
		{"the token", withToken, "192.0.2.7:5000", "Bearer tok", "", 200},
	} {
		r := httptest.NewRequest("GET", "/status", nil)
		r.RemoteAddr = c.remote
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if c.orig != "" {
			r.Header.Set("Origin", c.orig)
		}
		w := httptest.NewRecorder()
		c.h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
		}
	}
}
