//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// tsElicitClient runs testdata/urlelicit-client.mjs (the TypeScript SDK v2
// client, declaring URL-mode elicitation) against the gateway at url as
// the caller with token, calling tool in era ("legacy", "modern"); or,
// with url "stdio", against the gateway command after era, its
// environment with env added.
type tsElicitClient struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]json.RawMessage
	done  chan error
}

func startTSElicitClient(t *testing.T, env []string, url, token, tool, era string, command ...string) *tsElicitClient {
	t.Helper()
	node, path := tsClientScript(t, "urlelicit-client.mjs")
	cmd := exec.Command(node, append([]string{path, url, token, tool, era}, command...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &tsElicitClient{t: t, in: in, lines: make(chan map[string]json.RawMessage, 16), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(outPipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.lines <- m
			}
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("TypeScript client's stderr:\n%s", tail(stderr.String(), 3000))
		}
	})
	return c
}

// next is the client's next line, which has key: its members.
func (c *tsElicitClient) next(key string) map[string]json.RawMessage {
	c.t.Helper()
	select {
	case m, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("the TypeScript client ended before %q", key)
		}
		if _, ok := m[key]; !ok {
			c.t.Fatalf("the TypeScript client said %v, want %q", m, key)
		}
		return m
	case <-time.After(callTimeout):
		c.t.Fatalf("the TypeScript client said nothing of %q within %v", key, callTimeout)
	}
	return nil
}

func (c *tsElicitClient) say(line string) {
	c.t.Helper()
	if _, err := fmt.Fprintln(c.in, line); err != nil {
		c.t.Fatal(err)
	}
}

// TestOAuthGatewayUserURLElicitationTS: the official TypeScript SDK
// client, declaring URL-mode elicitation (2025-11-25), calls a tool of an
// "auth": "user" backend before signing in: instead of error -32042 the
// gateway sends it elicitation/create (mode "url", the sign-in link) and
// holds the call; the user accepts, signs in in a browser (the real
// authorization server), and the client enters the page's code with
// saas__confirm_sign_in while the call waits; the gateway then sends
// notifications/elicitation/complete for that elicitation, and the call
// itself answers, as the user. A declined elicitation answers the call
// with an error saying so. A 2026-07-28 client, whose request cannot be
// held, still gets -32042.
func TestOAuthGatewayUserURLElicitationTS(t *testing.T) {
	t.Parallel()
	if os.Getenv(npmServersEnv) == "" {
		t.Skipf("set %s (bash test/e2e/npm/install.sh) to drive the gateway with the TypeScript SDK client", npmServersEnv)
	}
	x := newUserFixture(t, 300)
	token := func(caller string) string { return x.inbound.token(caller, x.gwRes, "mcp:tools") }

	// Declined: the call answers, saying so; nothing is kept.
	c := startTSElicitClient(t, nil, x.gw.url, token("c-ps256"), "saas__whoami", "legacy")
	c.next("elicitation")
	c.say("decline")
	var declined struct {
		Called struct {
			IsError bool `json:"isError"`
			Content []struct{ Text string }
		}
	}
	mustUnmarshal(t, c.next("called")["called"], &declined.Called)
	if !declined.Called.IsError || len(declined.Called.Content) == 0 || !strings.Contains(declined.Called.Content[0].Text, "you did not (decline)") {
		t.Errorf("a declined sign-in: %+v", declined.Called)
	}

	// Accepted: the same call answers as alice once she confirmed.
	c = startTSElicitClient(t, nil, x.gw.url, token("c-es256"), "saas__whoami", "legacy")
	var e struct{ Mode, URL, ElicitationID, Message string }
	mustUnmarshal(t, c.next("elicitation")["elicitation"], &e)
	if e.Mode != "url" || e.ElicitationID == "" || !strings.HasPrefix(e.URL, x.gwRes+"/signin/saas?state=") || !strings.Contains(e.Message, "saas__confirm_sign_in") {
		t.Fatalf("the elicitation: %+v", e)
	}
	c.say("accept")
	body, _ := signIn(t, x.third, e.URL, "alice")
	c.say(confirmCode(t, body))
	if confirmed := string(c.next("confirmed")["confirmed"]); !strings.Contains(confirmed, "Signed in") {
		t.Errorf("confirm_sign_in: %s", confirmed)
	}
	end := c.next("called")
	called := end["called"]
	var got struct {
		Content []struct{ Text string }
		IsError bool `json:"isError"`
	}
	mustUnmarshal(t, called, &got)
	if got.IsError || len(got.Content) == 0 || !strings.Contains(got.Content[0].Text, `"sub":"alice"`) {
		t.Errorf("the call that waited for the sign-in: %s", called)
	}
	var completed []string
	mustUnmarshal(t, end["completed"], &completed)
	if len(completed) != 1 || completed[0] != e.ElicitationID {
		t.Errorf("notifications/elicitation/complete: %v, want [%s]", completed, e.ElicitationID)
	}

	// 2026-07-28: the request cannot be held for a browser: -32042, with
	// the link, as for a client without URL elicitation.
	c = startTSElicitClient(t, nil, x.gw.url, token("c-eddsa"), "saas__whoami", "modern")
	var failed struct {
		Code int
		Data struct {
			Elicitations []struct{ Mode, URL string }
		}
	}
	mustUnmarshal(t, c.next("error")["error"], &failed)
	if failed.Code != -32042 || len(failed.Data.Elicitations) != 1 || !strings.HasPrefix(failed.Data.Elicitations[0].URL, x.gwRes+"/signin/saas?state=") {
		t.Errorf("a 2026-07-28 client not signed in: %+v", failed)
	}
}

// TestOAuthGatewayUserStdioURLElicitationTS: over stdio, the TypeScript
// SDK client declaring URL elicitation is asked within its call to open
// the authorization URL (redirected back to the gateway's loopback
// listener); once the user signed in there, with no code to enter, the
// gateway sends notifications/elicitation/complete and the same call
// answers as the user.
func TestOAuthGatewayUserStdioURLElicitationTS(t *testing.T) {
	t.Parallel()
	if os.Getenv(npmServersEnv) == "" {
		t.Skipf("set %s (bash test/e2e/npm/install.sh) to drive the gateway with the TypeScript SDK client", npmServersEnv)
	}
	x := newStdioUserFixture(t)
	c := startTSElicitClient(t, x.env, "stdio", "", "saas__whoami", "legacy", binPath, "gateway", "-config", x.cfg)
	var e struct{ Mode, URL, ElicitationID, Message string }
	mustUnmarshal(t, c.next("elicitation")["elicitation"], &e)
	if e.Mode != "url" || !strings.HasPrefix(e.URL, x.third.issuer+"/") || !strings.Contains(e.URL, "redirect_uri=http%3A%2F%2F127.0.0.1%3A") || strings.Contains(e.Message, "confirm_sign_in") {
		t.Fatalf("the elicitation: %+v", e)
	}
	c.say("accept")
	signIn(t, x.third, e.URL, "alice")
	c.say("-")
	end := c.next("called")
	var got struct {
		Content []struct{ Text string }
		IsError bool `json:"isError"`
	}
	mustUnmarshal(t, end["called"], &got)
	if got.IsError || len(got.Content) == 0 || !strings.Contains(got.Content[0].Text, `"sub":"alice"`) {
		t.Errorf("the call that waited for the sign-in: %s", end["called"])
	}
	var completed []string
	mustUnmarshal(t, end["completed"], &completed)
	if len(completed) != 1 || completed[0] != e.ElicitationID {
		t.Errorf("notifications/elicitation/complete: %v, want [%s]", completed, e.ElicitationID)
	}
}
