package gateway

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSignInHandlerRefuses: a link or callback whose state no sign-in
// under way made is refused in words, and nothing is redirected to; a
// gateway without Options.UserSignIn has no handler.
func TestSignInHandlerRefuses(t *testing.T) {
	g, err := New(&Config{Backends: []Backend{{Name: "a", Command: "true"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.SignInHandler() != nil {
		t.Fatal("a handler without UserSignIn")
	}
	g2, err := New(&Config{Backends: []Backend{{Name: "a", Command: "true"}}}, Options{UserSignIn: &UserSignIn{Base: "http://127.0.0.1:1/mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	h := g2.SignInHandler()
	for _, c := range []struct {
		method, target string
		status         int
		says           string
	}{
		{"GET", "/mcp/signin/saas?state=nope", 400, "not valid"},
		{"GET", "/mcp/signin/saas", 400, "not valid"},
		{"GET", "/mcp/oauth/callback?state=nope&code=x", 400, "not the answer"},
		{"POST", "/mcp/signin/saas?state=nope", 405, "GET only"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(c.method, c.target, nil))
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.says) || w.Header().Get("Location") != "" {
			t.Errorf("%s %s: %d %q, want %d saying %q", c.method, c.target, w.Code, w.Body, c.status, c.says)
		}
		if w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: cacheable", c.method, c.target)
		}
	}
}

// TestURLElicitationDeclared: only an explicit "url" under "elicitation"
// declares URL mode; an empty "elicitation" is form mode alone.
func TestURLElicitationDeclared(t *testing.T) {
	for caps, want := range map[string]bool{
		`{"elicitation":{"url":{}}}`:           true,
		`{"elicitation":{"form":{},"url":{}}}`: true,
		`{"elicitation":{}}`:                   false,
		`{"elicitation":{"form":{}}}`:          false,
		`{"elicitation":{"url":null}}`:         false,
		`{"sampling":{}}`:                      false,
		``:                                     false,
		`{"elicitation":"url"}`:                false,
	} {
		if got := urlElicitation(json.RawMessage(caps)); got != want {
			t.Errorf("%s: %v, want %v", caps, got, want)
		}
	}
}
