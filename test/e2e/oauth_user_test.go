//go:build linux

package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// userFixture: mcprt gateway -http, protected by the authorization
// server inbound, with the backend "saas" ("auth": "user"): mcprt serve
// -http protected by another, third, whose tokens last ttl seconds, where
// the gateway is the client gw-user; the sealed token folder dir, its
// key file key. extra are more flags of the gateway's.
type userFixture struct {
	inbound, third *authServer
	gw             *httpProc
	gwRes, cfg     string
	dir, key       string
}

func newUserFixture(t *testing.T, ttl int, extra ...string) *userFixture {
	t.Helper()
	inbound := startAuthServer(t, asKeys("1"))
	gwRes := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	third := startAuthServerConfig(t, asKeys("2"), ttl, map[string]any{"authorizationCode": true,
		"clients": []map[string]any{{"client_id": "gw-user", "client_secret": "secret-gw-user", "alg": "ES256",
			"scope": "openid offline_access mcp:tools", "redirect_uris": []string{gwRes + "/oauth/callback"}}}})
	res := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	backend := startHTTP(t, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(res, "http://"), "/mcp"),
		"-http-oauth-issuer", third.issuer, "-http-oauth-resource", res, "-http-oauth-scopes", "mcp:tools")
	f := newGateway(t)
	cfg := f.config(map[string]any{"saas": map[string]any{"url": backend.url, "auth": "user",
		"oauth": map[string]any{"issuer": third.issuer, "clientId": "gw-user", "clientSecret": "${GW_SECRET}", "scopes": "mcp:tools"}}})
	dir := filepath.Join(t.TempDir(), "tokens")
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	gw := startHTTPEnv(t, []string{"GW_SECRET=secret-gw-user"}, binPath, append([]string{"gateway", "-config", cfg,
		"-http", strings.TrimSuffix(strings.TrimPrefix(gwRes, "http://"), "/mcp"),
		"-http-oauth-issuer", inbound.issuer, "-http-oauth-resource", gwRes, "-http-oauth-scopes", "mcp:tools",
		"-user-token-dir", dir, "-user-token-key", keyFile}, extra...)...)
	t.Cleanup(func() {
		log := gw.stderr.String()
		if strings.Contains(log, "secret-gw-user") || strings.Contains(log, "eyJ") {
			t.Errorf("a secret or a token reached the gateway's log")
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s\nthird party:\n%s", tail(log, 6000), tail(third.out.String(), 3000))
		}
	})

	// The backend is listed (the gateway as itself, by client
	// credentials) before a call may name its tools.
	c := connectHTTP(t, gw.url, withToken(client.Options{}, inbound.token("c-es256", gwRes, "mcp:tools")))
	deadline := time.Now().Add(callTimeout)
	for {
		tools, err := c.ListTools(testCtx(t))
		if err == nil && slices.ContainsFunc(tools, func(tl mcp.Tool) bool { return tl.Name == "saas__whoami" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("saas__whoami is not listed: %v %v", tools, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &userFixture{inbound: inbound, third: third, gw: gw, gwRes: gwRes, cfg: cfg, dir: dir, key: keyFile}
}

// signInURL calls whoami as c, expecting -32042, and returns its URL.
func (x *userFixture) signInURL(t *testing.T, c *client.Client) string {
	t.Helper()
	_, err := c.CallTool(testCtx(t), "saas__whoami", map[string]any{})
	var re *client.RPCError
	if !errors.As(err, &re) || re.Err.Code != -32042 {
		t.Fatalf("a call before signing in: %v, want error -32042", err)
	}
	raw, _ := json.Marshal(re.Err.Data)
	var data struct {
		Elicitations []struct{ Mode, ElicitationID, URL, Message string }
	}
	if err := json.Unmarshal(raw, &data); err != nil || len(data.Elicitations) != 1 {
		t.Fatalf("-32042's data: %s", raw)
	}
	e := data.Elicitations[0]
	if e.Mode != "url" || e.ElicitationID == "" || !strings.HasPrefix(e.URL, x.gwRes+"/signin/saas?state=") {
		t.Fatalf("-32042's elicitation: %+v", e)
	}
	return e.URL
}

// signIn signs caller in as user, confirming with the page's code, and
// returns caller's connection.
func (x *userFixture) signIn(t *testing.T, caller, user string) *client.Client {
	t.Helper()
	c := connectHTTP(t, x.gw.url, withToken(client.Options{}, x.inbound.token(caller, x.gwRes, "mcp:tools")))
	body, _ := signIn(t, x.third, x.signInURL(t, c), user)
	if text := callText(t, c, "saas__confirm_sign_in", map[string]any{"code": confirmCode(t, body)}); !strings.Contains(text, "Signed in") {
		t.Fatalf("confirm_sign_in: %q", text)
	}
	return c
}

var codeRE = regexp.MustCompile(`Code: ([A-Z2-9]{8})\n`)

// confirmCode is the confirmation code on the callback's page body.
func confirmCode(t *testing.T, body string) string {
	t.Helper()
	m := codeRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no confirmation code on the callback's page: %q", body)
	}
	return m[1]
}

// confirmRefused calls saas__confirm_sign_in as c with code, expecting a
// refusal (isError), and returns its text.
func confirmRefused(t *testing.T, c *client.Client, code string) string {
	t.Helper()
	r, err := c.CallTool(testCtx(t), "saas__confirm_sign_in", map[string]any{"code": code})
	if err != nil || !r.IsError || len(r.Content) == 0 {
		t.Fatalf("confirm_sign_in %q: %+v %v, want a refusal", code, r, err)
	}
	return r.Content[0].Text
}

// notSignedIn: a whoami call as c is still answered -32042, not as any
// user.
func (x *userFixture) notSignedIn(t *testing.T, c *client.Client, why string) {
	t.Helper()
	r, err := c.CallTool(testCtx(t), "saas__whoami", map[string]any{})
	var re *client.RPCError
	if !errors.As(err, &re) || re.Err.Code != -32042 {
		t.Fatalf("%s: whoami answered %+v %v, want -32042", why, r, err)
	}
}

// TestOAuthGatewayUserSignIn: "auth": "user". Two users reach, through
// mcprt gateway -http (protected by one authorization server), a
// backend protected by another, a third party's, where each signs in in
// a browser: a call before that is answered with error -32042 (URL
// elicitation required) whose URL, at the gateway, leads through the
// third party's login and consent back to the gateway's callback; then
// the backend's whoami names each user, never the other. Sign-out asks
// again. The kept tokens are sealed (no token in clear), and a gateway
// started with another key on the folder is refused.
func TestOAuthGatewayUserSignIn(t *testing.T) {
	t.Parallel()
	x := newUserFixture(t, 300)
	inbound, third, gw, gwRes, cfg, dir := x.inbound, x.third, x.gw, x.gwRes, x.cfg, x.dir
	signInURL := func(c *client.Client) string { t.Helper(); return x.signInURL(t, c) }

	users := map[string]string{"c-es256": "alice", "c-ps256": "bob"}
	conns := map[string]*client.Client{}
	for caller, user := range users {
		c := connectHTTP(t, gw.url, withToken(client.Options{}, inbound.token(caller, gwRes, "mcp:tools")))
		conns[caller] = c
		link := signInURL(c)
		body, _ := signIn(t, third, link, user)
		// The page names the gateway user the account is bound to, and
		// says to enter the code only where the sign-in was asked for.
		if !strings.Contains(body, `to the gateway user "sub:`+caller+`"`) || !strings.Contains(body, "Enter this code only in the client where you asked to sign in") {
			t.Fatalf("the callback's page: %q", body)
		}
		// Not bound before the caller confirms.
		x.notSignedIn(t, c, "signed in, not confirmed")
		if text := callText(t, c, "saas__confirm_sign_in", map[string]any{"code": confirmCode(t, body)}); !strings.Contains(text, "Signed in") {
			t.Fatalf("confirm_sign_in: %q", text)
		}
		// The link is single use.
		noRedirect := &http.Client{Timeout: callTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if resp, err := noRedirect.Get(link); err != nil || resp.StatusCode != 400 {
			t.Errorf("the link followed again: %v %v, want 400", resp, err)
		} else {
			resp.Body.Close()
		}
	}
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		for caller, user := range users {
			c := connectHTTP(t, gw.url, withToken(client.Options{Era: era}, inbound.token(caller, gwRes, "mcp:tools")))
			if who := whoami(t, c, "saas"); who["sub"] != user {
				t.Errorf("%v: %s signed in as %s reaches the backend as %v", era, caller, user, who["sub"])
			}
		}
	}

	// The folder holds sealed files: no token, no JSON in clear.
	files, _ := filepath.Glob(filepath.Join(dir, "*.sealed"))
	if len(files) != 3 { // the key check and two tokens (dave's comes later)
		t.Errorf("the token folder holds %v, want the key check and two tokens", files)
	}
	for _, p := range files {
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), "eyJ") || strings.Contains(string(data), "access_token") || strings.Contains(string(data), "alice") {
			t.Errorf("%s holds a token in clear", p)
		}
	}

	// Sign-out: forgotten, and the next call asks again; the other user
	// is still signed in.
	if text := callText(t, conns["c-es256"], "saas__sign_out", map[string]any{}); !strings.Contains(text, "Signed out") {
		t.Errorf("sign_out: %q", text)
	}
	signInURL(conns["c-es256"])
	if who := whoami(t, conns["c-ps256"], "saas"); who["sub"] != "bob" {
		t.Errorf("after alice signed out, bob reaches the backend as %v", who["sub"])
	}

	// mcprt call prints the URL to open, and it is a working link.
	call := exec.Command(binPath, "call", "-url", gw.url, "-header", "Authorization: Bearer "+inbound.token("c-eddsa", gwRes, "mcp:tools"), "saas__whoami")
	out, err := call.CombinedOutput()
	m := regexp.MustCompile(`open this URL, do as the server and the page say, then run the command again: (\S+)`).FindSubmatch(out)
	if err == nil || m == nil || !strings.HasPrefix(string(m[1]), gwRes+"/signin/saas?state=") || !strings.Contains(string(out), "call the tool saas__confirm_sign_in") {
		t.Fatalf("mcprt call before signing in: %v\n%s", err, out)
	}
	body, _ := signIn(t, third, string(m[1]), "dave")
	if out, err := exec.Command(binPath, "call", "-url", gw.url, "-header", "Authorization: Bearer "+inbound.token("c-eddsa", gwRes, "mcp:tools"), "saas__confirm_sign_in", "code="+confirmCode(t, body)).CombinedOutput(); err != nil || !strings.Contains(string(out), "Signed in") {
		t.Fatalf("mcprt call saas__confirm_sign_in: %v\n%s", err, out)
	}
	if out, err := exec.Command(binPath, "call", "-url", gw.url, "-header", "Authorization: Bearer "+inbound.token("c-eddsa", gwRes, "mcp:tools"), "saas__whoami").CombinedOutput(); err != nil || !strings.Contains(string(out), `"sub":"dave"`) {
		t.Errorf("mcprt call after signing in: %v\n%s", err, out)
	}

	// Another key on the folder: refused at start.
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte(strings.Repeat("cd", 32)), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "gateway", "-config", cfg, "-user-token-dir", dir, "-user-token-key", wrong)
	cmd.Env = append(os.Environ(), "GW_SECRET=x")
	out, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "not the one this token folder was sealed with") {
		t.Errorf("a wrong key: %v\n%s", err, out)
	}
	if strings.Contains(string(out), hex.EncodeToString([]byte{0xcd, 0xcd})) {
		t.Errorf("the key is in the error: %s", out)
	}
}

// TestOAuthGatewayUserRefresh: a signed-in user's token (3 s of life) is
// renewed with its refresh token before it expires (the authorization
// server counts the refresh grants): calls past its expiry go through as
// the user, with no sign-in asked for.
func TestOAuthGatewayUserRefresh(t *testing.T) {
	t.Parallel()
	x := newUserFixture(t, 3)
	c := x.signIn(t, "c-es256", "carol")
	for i := range 3 {
		if who := whoami(t, c, "saas"); who["sub"] != "carol" {
			t.Fatalf("call %d: %v", i, who)
		}
		time.Sleep(2 * time.Second)
	}
	if n := strings.Count(x.third.out.String(), "refreshed for gw-user"); n < 1 {
		t.Errorf("no refresh grant at the authorization server in 3 calls over 6s of 3s tokens")
	}
}

// TestOAuthGatewayUserSignInConfirm: the sign-in link is bound to the
// caller who asked for it only by being handed to them, so a gateway
// user (alice, caller c-es256) may pass theirs to another (bob, caller
// c-ps256), who completes it with his account at the third party. That
// account is not bound to alice: the callback shows bob a code and whose
// gateway user it would connect to, and only alice entering that code
// binds it. Alice with a wrong code is refused and still not signed in
// (never bob's identity); bob entering his code himself is refused and
// ends that sign-in (the token is dropped: the right code is no good
// after); three wrong codes end a sign-in too.
func TestOAuthGatewayUserSignInConfirm(t *testing.T) {
	t.Parallel()
	x := newUserFixture(t, 300)
	connect := func(caller string) *client.Client {
		return connectHTTP(t, x.gw.url, withToken(client.Options{}, x.inbound.token(caller, x.gwRes, "mcp:tools")))
	}
	alice, bob := connect("c-es256"), connect("c-ps256")

	// Alice's link, completed in bob's browser as bob.
	body, _ := signIn(t, x.third, x.signInURL(t, alice), "bob")
	if !strings.Contains(body, `to the gateway user "sub:c-es256"`) || !strings.Contains(body, "if you did not ask, close this page") {
		t.Fatalf("the callback's page does not say whom it binds to: %q", body)
	}
	code := confirmCode(t, body)
	wrong := "ABCDEFGH"
	if wrong == code {
		wrong = "HGFEDCBA"
	}
	// (1) Alice with a wrong code: refused.
	if text := confirmRefused(t, alice, wrong); !strings.Contains(text, "not the code") {
		t.Errorf("a wrong code: %q", text)
	}
	// (2) Without the code alice is not bob, nor signed in at all.
	x.notSignedIn(t, alice, "alice without the code")
	// (3) Bob entering the code: refused, and the sign-in is ended.
	if text := confirmRefused(t, bob, code); !strings.Contains(text, "not for you") {
		t.Errorf("the code entered by another gateway user: %q", text)
	}
	if text := confirmRefused(t, alice, code); !strings.Contains(text, "No sign-in") {
		t.Errorf("the code after another user entered it: %q", text)
	}
	x.notSignedIn(t, alice, "after bob entered the code")
	x.notSignedIn(t, bob, "bob, who never signed in for himself")

	// Three wrong codes end a sign-in: the right one is refused after.
	body, _ = signIn(t, x.third, x.signInURL(t, alice), "bob")
	code = confirmCode(t, body)
	for range 3 {
		confirmRefused(t, alice, wrong)
	}
	if text := confirmRefused(t, alice, code); !strings.Contains(text, "No sign-in") {
		t.Errorf("the right code after three wrong ones: %q", text)
	}
	x.notSignedIn(t, alice, "after three wrong codes")

	// Alice's own sign-in, confirmed by her: she is herself.
	x.signIn(t, "c-es256", "alice")
	if who := whoami(t, alice, "saas"); who["sub"] != "alice" {
		t.Errorf("alice signed in and confirmed reaches the backend as %v", who["sub"])
	}
}

// TestOAuthGatewayUserAuditStatus: the audit log and the status page
// say which caller used which credential mode ("user" for saas), and
// hold no token: not the caller's inbound one, not the third party's.
func TestOAuthGatewayUserAuditStatus(t *testing.T) {
	t.Parallel()
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	x := newUserFixture(t, 300, "-audit", auditPath, "-http-status", "/status")
	token := x.inbound.token("c-es256", x.gwRes, "mcp:tools")
	c := x.signIn(t, "c-es256", "alice")
	if who := whoami(t, c, "saas"); who["sub"] != "alice" {
		t.Fatalf("whoami: %v", who)
	}

	req, _ := http.NewRequest("GET", strings.TrimSuffix(x.gw.url, "/mcp")+"/status", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status page: %d %s", resp.StatusCode, page)
	}
	for _, want := range []string{`data-auth="user">user (callers: 1)`, `data-principal="sub:c-es256" data-auth="user"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the status page lacks %q:\n%s", want, page)
		}
	}
	noToken(t, "the status page", string(page), token)

	// The audit log is written within its flush (200ms).
	var lines []map[string]any
	deadline := time.Now().Add(callTimeout)
	for {
		data, _ := os.ReadFile(auditPath)
		noToken(t, "the audit log", string(data), token)
		lines = lines[:0]
		for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(l), &e) == nil && e["tool"] == "saas__whoami" && e["outcome"] == "result" {
				lines = append(lines, e)
			}
		}
		if len(lines) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(lines) == 0 {
		t.Fatal("no audit line of the whoami call")
	}
	if e := lines[len(lines)-1]; e["principal"] != "c-es256" || e["backend"] != "saas" || e["credential"] != "user" {
		t.Errorf("the whoami call's audit line: %v", e)
	}
}

// noToken: what holds no access token: not token, nor any JWT.
func noToken(t *testing.T, what, s, token string) {
	t.Helper()
	if strings.Contains(s, token) || strings.Contains(s, "eyJ") {
		t.Errorf("%s holds a token", what)
	}
}

// TestOAuthGatewayUserForget: the operator's -forget-user deletes a
// user's kept token while the gateway serves: that user's next call is
// asked to sign in again (the connection made with the token is not used
// any more), the other user is still signed in; forgetting again says
// none was kept; a wrong key or an unknown backend is refused.
func TestOAuthGatewayUserForget(t *testing.T) {
	t.Parallel()
	x := newUserFixture(t, 300)
	alice, bob := x.signIn(t, "c-es256", "alice"), x.signIn(t, "c-ps256", "bob")
	for c, want := range map[*client.Client]string{alice: "alice", bob: "bob"} {
		if who := whoami(t, c, "saas"); who["sub"] != want {
			t.Fatalf("whoami: %v, want %s", who, want)
		}
	}
	forget := func(args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, binPath, append([]string{"gateway", "-config", x.cfg, "-user-token-dir", x.dir}, args...)...)
		cmd.Env = append(os.Environ(), "GW_SECRET=secret-gw-user")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	files := func() int {
		fs, _ := filepath.Glob(filepath.Join(x.dir, "*.sealed"))
		return len(fs)
	}
	if n := files(); n != 3 {
		t.Fatalf("%d sealed files, want the key check and two tokens", n)
	}
	if out, code := forget("-user-token-key", x.key, "-forget-user", "sub:c-es256", "-forget-backend", "saas"); code != 0 || out != "saas: forgot the token of sub:c-es256\n" {
		t.Fatalf("-forget-user: exit %d\n%s", code, out)
	}
	if n := files(); n != 2 {
		t.Errorf("%d sealed files after -forget-user, want 2", n)
	}
	x.notSignedIn(t, alice, "after -forget-user")
	if who := whoami(t, bob, "saas"); who["sub"] != "bob" {
		t.Errorf("bob after alice was forgotten: %v", who)
	}
	// The bare subject, as the audit log names it; nothing left to forget.
	if out, code := forget("-user-token-key", x.key, "-forget-user", "c-es256"); code != 0 || out != "saas: no token of sub:c-es256 was kept\n" {
		t.Errorf("-forget-user again: exit %d\n%s", code, out)
	}
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte(strings.Repeat("cd", 32)), 0o600)
	if out, code := forget("-user-token-key", wrong, "-forget-user", "c-ps256"); code != 2 || !strings.Contains(out, "not the one this token folder was sealed with") {
		t.Errorf("a wrong key: exit %d\n%s", code, out)
	}
	if out, code := forget("-user-token-key", x.key, "-forget-user", "c-ps256", "-forget-backend", "nope"); code != 2 || !strings.Contains(out, `-forget-backend "nope"`) {
		t.Errorf("an unknown backend: exit %d\n%s", code, out)
	}
	if n := files(); n != 2 {
		t.Errorf("%d sealed files after the refusals, want 2", n)
	}
	if who := whoami(t, bob, "saas"); who["sub"] != "bob" {
		t.Errorf("bob at the end: %v", who)
	}
	// Alice signs in again, and is herself.
	x.signIn(t, "c-es256", "alice")
	if who := whoami(t, alice, "saas"); who["sub"] != "alice" {
		t.Errorf("alice signed in again: %v", who)
	}
}
