//go:build linux

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// TestOAuthGatewayUserStdio: "auth": "user" over stdio, where the
// gateway's one client is its one local user. A call before signing in is
// answered -32042 whose URL is the third party's authorization URL with
// a redirect to a loopback listener of the gateway's (any port of
// 127.0.0.1, as mcprt login); signed in there (a browser, as plain
// HTTP), the user's next call reaches the backend as them, with no code
// to enter. The token is kept sealed in the user's config folder
// (XDG_CONFIG_HOME/mcprt/user-tokens), its key made there 0600; a new
// gateway process uses it at once; -forget-user local deletes it, and
// the next call asks again.
func TestOAuthGatewayUserStdio(t *testing.T) {
	t.Parallel()
	x := newStdioUserFixture(t)
	third, cfg, conf, env := x.third, x.cfg, x.conf, x.env
	connect := func() *client.Client {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		c, err := client.Connect(ctx, client.Command{Path: binPath, Args: []string{"gateway", "-config", cfg}, Env: env}, &client.Options{})
		if err != nil {
			t.Fatalf("mcprt gateway over stdio: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// whoamiOrLink calls whoami: the subject it names, or the -32042's URL.
	whoamiOrLink := func(c *client.Client) (sub, link string) {
		t.Helper()
		r, err := c.CallTool(testCtx(t), "saas__whoami", map[string]any{})
		var re *client.RPCError
		switch {
		case errors.As(err, &re) && re.Err.Code == -32042:
			data, _ := re.Err.Data.(map[string]any)
			es, _ := data["elicitations"].([]any)
			if len(es) != 1 {
				t.Fatalf("-32042's data: %v", re.Err.Data)
			}
			e, _ := es[0].(map[string]any)
			u, _ := e["url"].(string)
			return "", u
		case err != nil || r.IsError || len(r.Content) == 0:
			t.Fatalf("whoami: %+v %v", r, err)
		}
		var who map[string]any
		mustUnmarshal(t, []byte(r.Content[0].Text), &who)
		s, _ := who["sub"].(string)
		return s, ""
	}
	// The backend's tools are listed (as the gateway, by client
	// credentials) once it is up.
	c := connect()
	deadline := time.Now().Add(callTimeout)
	for {
		tools, err := c.ListTools(testCtx(t))
		if err == nil && len(tools) > 0 && strings.HasPrefix(tools[0].Name, "saas__") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the backend's tools are not listed: %v %v", tools, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, link := whoamiOrLink(c)
	if !strings.HasPrefix(link, third.issuer+"/") || !strings.Contains(link, "redirect_uri=http%3A%2F%2F127.0.0.1%3A") || !strings.Contains(link, "code_challenge=") {
		t.Fatalf("the sign-in link over stdio: %q", link)
	}
	body, at := signIn(t, third, link, "alice")
	if at.Hostname() != "127.0.0.1" || at.Path != "/callback" || !strings.Contains(body, "Authorization received") {
		t.Fatalf("the browser ended at %s: %q", at, body)
	}
	// The token is kept once the code is exchanged, just after the
	// redirect; a call meanwhile waits for it: the next call goes as
	// alice, with no link.
	if sub, link := whoamiOrLink(c); sub != "alice" {
		t.Fatalf("the call just after signing in: whoami %q, link %q", sub, link)
	}
	signedIn := func(c *client.Client, want string) {
		t.Helper()
		deadline := time.Now().Add(callTimeout)
		for {
			sub, link := whoamiOrLink(c)
			if sub == want {
				return
			}
			if sub != "" || time.Now().After(deadline) {
				t.Fatalf("whoami: %q (link %q), want %s", sub, link, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	signedIn(c, "alice")

	// Sealed in the config folder, the key made there 0600.
	key := filepath.Join(conf, "mcprt", "user-token.key")
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the key file: %v %v", fi, err)
	}
	files, _ := filepath.Glob(filepath.Join(conf, "mcprt", "user-tokens", "*.sealed"))
	if len(files) != 2 { // the key check and alice's token
		t.Errorf("the token folder holds %v", files)
	}
	for _, p := range files {
		if data, _ := os.ReadFile(p); strings.Contains(string(data), "eyJ") || strings.Contains(string(data), "alice") {
			t.Errorf("%s holds a token in clear", p)
		}
	}
	c.Close()

	// Another gateway process: still signed in.
	c = connect()
	signedIn(c, "alice")

	// -forget-user local: the next call asks again.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	forget := exec.CommandContext(ctx, binPath, "gateway", "-config", cfg, "-forget-user", "local")
	forget.Env = append(os.Environ(), env...)
	if out, err := forget.CombinedOutput(); err != nil || string(out) != "saas: forgot the token of local\n" {
		t.Fatalf("-forget-user local: %v\n%s", err, out)
	}
	if sub, link := whoamiOrLink(c); sub != "" || link == "" {
		t.Errorf("after -forget-user: whoami %q, want a sign-in link", sub)
	}
}

// stdioUserFixture: the backend "saas" ("auth": "user"), mcprt serve
// -http protected by the authorization server third, where the gateway
// is the native client gw-user (its loopback redirect on any port), in
// the gateway configuration cfg; env, for the gateway over stdio, puts
// the user's config folder at conf.
type stdioUserFixture struct {
	third     *authServer
	cfg, conf string
	env       []string
}

func newStdioUserFixture(t *testing.T) *stdioUserFixture {
	t.Helper()
	third := startAuthServerConfig(t, asKeys("2"), 300, map[string]any{"authorizationCode": true,
		"clients": []map[string]any{{"client_id": "gw-user", "client_secret": "secret-gw-user", "alg": "ES256", "application_type": "native",
			"scope": "openid offline_access mcp:tools", "redirect_uris": []string{"http://127.0.0.1/callback"}}}})
	res := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	backend := startHTTP(t, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(res, "http://"), "/mcp"),
		"-http-oauth-issuer", third.issuer, "-http-oauth-resource", res, "-http-oauth-scopes", "mcp:tools")
	f := newGateway(t)
	cfg := f.config(map[string]any{"saas": map[string]any{"url": backend.url, "auth": "user",
		"oauth": map[string]any{"issuer": third.issuer, "clientId": "gw-user", "clientSecret": "${GW_SECRET}", "scopes": "mcp:tools"}}})
	conf := t.TempDir()
	return &stdioUserFixture{third: third, cfg: cfg, conf: conf,
		env: []string{"GW_SECRET=secret-gw-user", "XDG_CONFIG_HOME=" + conf, "MCPRT_USER_TOKEN_KEY="}}
}
