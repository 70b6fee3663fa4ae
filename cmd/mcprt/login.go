package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/session/client/oauth"
)

func init() {
	register(verb{name: "login", summary: "authorize mcprt at an OAuth-protected MCP server (browser sign-in), keeping the token", run: login})
	register(verb{name: "logout", summary: "forget the token mcprt login kept for an MCP server", run: logout})
}

const loginAbout = `Usage: mcprt login -url URL [flags]

Signs in to the OAuth-protected MCP server at URL as its MCP
authorization specification describes: mcprt discovers the server's
authorization server, registers itself there (a Client ID Metadata
Document or dynamic registration, unless -client-id names a
pre-registered client), and prints the address to open in a browser
(and opens it where it can); after the sign-in the authorization server
sends the browser back to mcprt on 127.0.0.1. A client given with
-client-id (and -client-secret-file) belongs to one authorization
server: -client-issuer, or else the one the server names now, which it is
then bound to; it is offered to no other, and a later login to the same
server and client refuses an authorization server other than the one
bound (mcprt logout -url URL first, or give -client-issuer, to move it).
The token, and its refresh
token, are kept in the user's configuration folder (readable by the
user alone), per server and issuer; the client verbs given -url URL
(mcprt call -url URL …) send it, and renew it before it expires.

Flags:
`

func login(args []string, s streams) int {
	fs := flags("login", loginAbout, s)
	endpoint := fs.String("url", "", "the MCP server's Streamable HTTP endpoint (https://HOST/mcp)")
	clientID := fs.String("client-id", "", "a client `id` registered at the server's authorization server (default: register dynamically)")
	secretFile := fs.String("client-secret-file", "", "the pre-registered client's secret, read from `file`")
	clientIssuer := fs.String("client-issuer", "", "the authorization server (issuer `URL`) that registered -client-id (default: the one the server names, bound from then on)")
	scopes := fs.String("scopes", "", "`scopes` to ask for besides those the server names (comma- or space-separated)")
	noBrowser := fs.Bool("no-browser", false, "print the sign-in address only; do not start a browser")
	timeout := fs.Duration("timeout", 5*time.Minute, "bound on the whole sign-in")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	if *endpoint == "" || fs.NArg() > 0 {
		fmt.Fprintf(s.Stderr, "mcprt login: want -url URL and nothing else\n(see mcprt login --help)\n")
		return runtime.ExitUsage
	}
	if *clientID == "" && (*secretFile != "" || *clientIssuer != "") {
		fmt.Fprintf(s.Stderr, "mcprt login: -client-secret-file and -client-issuer are for the client of -client-id\n")
		return runtime.ExitUsage
	}
	store, err := oauth.DefaultStore()
	if err != nil {
		fmt.Fprintf(s.Stderr, "mcprt login: %v\n", err)
		return runtime.ExitFailure
	}
	secret, err := readSecretFile(*secretFile)
	if err != nil {
		fmt.Fprintf(s.Stderr, "mcprt login: %v\n", err)
		return runtime.ExitUsage
	}
	ua := &oauth.Loopback{Open: func(_ context.Context, u string) error {
		fmt.Fprintf(s.Stderr, "Open this address in a browser to sign in:\n\n  %s\n\n", u)
		if !*noBrowser {
			openBrowser(u)
		}
		return nil
	}}
	defer ua.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(s.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	issuer := *clientIssuer
	if *clientID != "" && issuer == "" {
		// The client is bound to the authorization server the server
		// names now; the Authorizer offers it to that one alone.
		probe, err := oauth.New(*endpoint, oauth.Config{UserAgent: ua, Logger: logger})
		if err == nil {
			issuer, err = probe.Issuer(ctx)
		}
		if err != nil {
			fmt.Fprintf(s.Stderr, "mcprt login: finding the server's authorization server: %v\n", err)
			return runtime.ExitFailure
		}
		// A client bound at an earlier sign-in stays bound: a server
		// that now names another authorization server does not get it.
		if st, err := store.Load(canonicalURL(*endpoint)); err == nil && st != nil && st.ClientID == *clientID && st.Token.Issuer != issuer {
			fmt.Fprintf(s.Stderr, "mcprt login: client %s was bound to the authorization server %s when it signed in to this server; the server now names %s. Not offering the client there: if that is right, mcprt logout -url %s first, or give -client-issuer.\n",
				*clientID, st.Token.Issuer, issuer, *endpoint)
			return runtime.ExitFailure
		}
		fmt.Fprintf(s.Stderr, "mcprt login: client %s is taken to be registered at %s, the authorization server the server names; it is offered to no other\n", *clientID, issuer)
	}
	a, err := oauth.New(*endpoint, oauth.Config{
		ClientID: *clientID, ClientSecret: secret, ClientIssuer: issuer, Scopes: splitScopes(*scopes),
		UserAgent: ua, Store: store, Logger: logger,
	})
	if err != nil {
		fmt.Fprintf(s.Stderr, "mcprt login: %v\n", err)
		return runtime.ExitUsage
	}
	a.Logout() // sign in afresh, whatever was kept
	// A ping is the request that meets the server's 401 and so starts
	// the sign-in; it also shows that the token is accepted.
	c, err := client.ConnectURL(ctx, *endpoint, &client.Options{HTTPClient: a.Client(),
		ClientInfo: mcp.Implementation{Name: "mcprt", Version: version}})
	if err == nil {
		err = c.Ping(ctx)
		c.Close()
	}
	t := a.Token()
	if err != nil || t == nil {
		if err == nil {
			err = errors.New("the server asked for no authorization")
		}
		fmt.Fprintf(s.Stderr, "mcprt login: %v\n", err)
		return runtime.ExitFailure
	}
	fmt.Fprintf(s.Stderr, "mcprt login: signed in to %s (issuer %s); the token is kept in %s\n",
		t.Resource, t.Issuer, store.Path(canonicalURL(*endpoint)))
	return runtime.ExitOK
}

func logout(args []string, s streams) int {
	fs := flags("logout", "Usage: mcprt logout -url URL\n\nForgets the token mcprt login kept for the MCP server at URL (its\nauthorization server may still consider it valid until it expires).\n\nFlags:\n", s)
	endpoint := fs.String("url", "", "the MCP server's Streamable HTTP endpoint")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	if *endpoint == "" || fs.NArg() > 0 {
		fmt.Fprintf(s.Stderr, "mcprt logout: want -url URL and nothing else\n(see mcprt logout --help)\n")
		return runtime.ExitUsage
	}
	store, err := oauth.DefaultStore()
	if err == nil {
		err = store.Delete(canonicalURL(*endpoint))
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "mcprt logout: %v\n", err)
		return runtime.ExitFailure
	}
	return runtime.ExitOK
}

// canonicalURL is how the token store names a server: lower-case scheme
// and host, no query nor fragment (as package oauth keys it).
func canonicalURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath}
	return c.String()
}

// storedAuthorizer is the client verbs' OAuth: the token mcprt login
// kept for endpoint, renewed as needed; a server that wants a new
// sign-in gets an error saying to run mcprt login. nil when nothing is
// kept: a server that answers 401 then gets the 401 (a static token's
// server is no OAuth one).
func storedAuthorizer(endpoint string, log *slog.Logger) *http.Client {
	store, err := oauth.DefaultStore()
	if err != nil {
		return nil
	}
	if st, err := store.Load(canonicalURL(endpoint)); err != nil || st == nil {
		return nil
	}
	a, err := oauth.New(endpoint, oauth.Config{UserAgent: noSignIn{endpoint}, Store: store, Logger: log})
	if err != nil {
		return nil
	}
	return a.Client()
}

// noSignIn is the user agent of a verb that signs in nobody.
type noSignIn struct{ endpoint string }

func (n noSignIn) RedirectURI(context.Context) (string, error) {
	return "", fmt.Errorf("the server wants a new sign-in: run mcprt login -url %s", n.endpoint)
}

func (n noSignIn) Authorize(context.Context, string) (url.Values, error) {
	return nil, fmt.Errorf("the server wants a new sign-in: run mcprt login -url %s", n.endpoint)
}

func splitScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// readSecretFile reads a secret from a file ("" for none), trimmed of
// surrounding white space; errors name the file, never the content.
func readSecretFile(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}

// openBrowser starts the platform's URL opener, not waiting for it; the
// printed address is the fallback.
func openBrowser(u string) {
	var cmd *exec.Cmd
	switch goruntime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	_ = cmd.Start() // not waited for: the opener hands over and exits, and so does mcprt soon
}
