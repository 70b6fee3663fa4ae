package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// Config is a gateway's configuration: the backends, in the order the
// file lists them. Read it with LoadConfig or ParseConfig, or build it in
// code (zero fields of a Backend take the defaults below).
type Config struct {
	Backends []Backend
	// ToolSearch and AlwaysList are the top-level "toolSearch" and
	// "alwaysList": Options.ToolSearch and Options.AlwaysList, from the
	// file.
	ToolSearch bool
	AlwaysList []string
	// Endpoints are the top-level "endpoints": virtual endpoints by name,
	// each a subset of what the gateway offers (see Endpoint).
	Endpoints map[string]Endpoint
	// Warnings are what the file held that the gateway ignores: unknown
	// keys, disabled backends. The gateway prints them on stderr.
	Warnings []string
}

// Backend is one backend server.
type Backend struct {
	// Name is the key of the server in mcpServers; messages and logs use it.
	Name string
	// Command, Args, Env ("KEY=value", added to the gateway's own
	// environment) and Dir (the working directory; "" for the gateway's)
	// start the server.
	Command string
	Args    []string
	Env     []string
	Dir     string
	// EnvFile ("envFile", as VS Code writes it) names a file of KEY=value
	// lines that LoadEnvFiles adds to Env, below Env's own entries.
	EnvFile string
	// URL, instead of Command, is a remote server's Streamable HTTP
	// endpoint (http:// or https://), which the gateway connects to
	// (client.ConnectURL) instead of starting a process; Headers go on
	// every HTTP request to it ("Authorization": "Bearer …"). A remote
	// backend is supervised as a process is: restarting it is connecting
	// again, after the same backoff, within the same intensity; a lost
	// connection (a refused or broken one, a 5xx, a legacy session the
	// server no longer knows, a listen stream it ended) counts as the
	// backend going away.
	URL     string
	Headers map[string]string
	// OAuth, for a remote backend, makes the gateway an OAuth 2.1 client
	// of it (session/client/oauth) with the client credentials grant:
	// the token is obtained from OAuth.Issuer (and no other) when the
	// server first answers 401, sent to that server alone, and renewed
	// before it expires.
	OAuth *OAuth
	// Auth is whom a remote backend's requests are made as (its "auth"
	// key): AuthService (or ""), the gateway itself (Headers, or OAuth's
	// client credentials); AuthExchange, each caller: see AuthExchange.
	Auth string

	// Prefix namespaces the backend's tools, prompts, resources and
	// templates: "<Prefix>__<name>". The default is Name with every
	// character that a tool name cannot hold replaced by '_'. NoPrefix
	// leaves the names as the backend gives them.
	Prefix   string
	NoPrefix bool
	// Timeout bounds each request forwarded to the backend, the connect
	// included (default DefaultTimeout). The request's deadline in the
	// gateway's server is set a little longer (Tool.Timeout for a tool,
	// Peer.SetTimeout for the others), so that the client hears the
	// backend named, whatever the runtime's RequestTimeout.
	Timeout time.Duration
	// MaxTimeout bounds a request whose backend reports progress: each
	// notifications/progress starts its Timeout again, up to MaxTimeout
	// after it was sent (default 10m; one not longer than
	// Timeout lets no progress extend it). The gateway asks every backend
	// request for progress, whether its client did or not.
	MaxTimeout time.Duration
	// MaxRestarts restarts are allowed within RestartWindow (defaults
	// 5, 60s); past them the backend is
	// failed and stays down until a call comes after Cooldown (default
	// 60s); one that failed before it ever listed what it
	// offers, which no call can reach, is started again after Cooldown.
	// MaxRestarts < 0 allows none.
	MaxRestarts   int
	RestartWindow time.Duration
	Cooldown      time.Duration
	// Backoff is the wait before the first restart of a series; it doubles
	// with each failure within RestartWindow, up to MaxBackoff (defaults
	// 250ms, 30s).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// RestartWait is how long a request that comes while the backend is
	// restarting waits for it to be up again, within the request's own
	// Timeout, before it is answered that the backend is restarting
	// (default DefaultRestartWait; negative: not at all). A restart
	// mostly takes well under a second: the caller should not see it.
	// Requests in flight when the backend went away are answered at once.
	RestartWait time.Duration
	// PingInterval is how often an idle backend is pinged; one that does
	// not answer within PingTimeout is restarted like a crashed one
	// (defaults 30s, 10s; PingInterval < 0
	// never pings).
	PingInterval time.Duration
	PingTimeout  time.Duration
	// Lazy backends are not started with the gateway but by the first
	// request routed to them (see Gateway.Start), and are stopped again
	// after IdleTimeout without one (default 10m).
	Lazy        bool
	IdleTimeout time.Duration
	// AllowTools, when not nil, are the only tools the gateway offers of
	// the backend's: names, as the backend gives them, or path.Match
	// patterns ("read_*"). HideTools are names or patterns whose tools it
	// does not offer, allowed or not.
	AllowTools []string
	HideTools  []string
	// Access, when set, is what a caller needs to see and use each of
	// the backend's tools, prompts, resources and templates: the scopes of
	// its access token, and claim values (handlers.Access). ToolAccess
	// adds, for the tools whose names (as the backend gives them) match a
	// key (a name or a path.Match pattern), what that key's Access asks
	// besides: every matching key's. They matter only to callers an
	// authorization server vouched for (mcprt gateway -http
	// -http-oauth-issuer): a request without a caller, such as stdio's,
	// meets no Access, so what has one is offered to none.
	Access     *handlers.Access
	ToolAccess map[string]*handlers.Access
	// Tools are overrides of the backend's tools, by the backend's name
	// of each ("tools"): see ToolOverride. AllowTools, HideTools and
	// ToolAccess still name the tools as the backend does.
	Tools map[string]*ToolOverride
	// Protocol is "" or "auto" (probe server/discover, fall back to
	// initialize), "legacy" or "modern" (one era), or one revision
	// ("2025-06-18"): how the gateway connects to the backend. Pinning
	// spares a legacy server that never answers the probe its wait.
	Protocol string
}

// OAuth is a remote backend's "oauth" block: the gateway's credentials
// at Issuer, the authorization server that issued them. They are used
// only when the backend's protected resource metadata names that issuer:
// a backend naming another gets no token, and the credentials never
// reach it.
type OAuth struct {
	// Issuer is the authorization server's issuer identifier (https, or
	// http on loopback), required.
	Issuer   string
	ClientID string
	// ClientSecret authenticates the client (client_secret_basic or
	// _post, as the server supports), or KeyFile, a PEM private key, by
	// private_key_jwt (RFC 7523).
	ClientSecret string
	KeyFile      string
	// Scopes are asked for besides those the backend names.
	Scopes []string
	// MetadataOrigins are origins besides the backend's own its resource
	// metadata may be fetched from; AllowPrivate lets the backend name
	// metadata and endpoints on private and loopback addresses when it
	// is not on one itself (link-local ones stay refused).
	MetadataOrigins []string
	AllowPrivate    bool
}

// The values of Backend.Auth.
const (
	// AuthService: every request reaches the backend as the gateway,
	// with its Headers or its OAuth client credentials token.
	AuthService = "service"
	// AuthExchange: a request made for a caller who came with an OAuth
	// access token (-http with -http-oauth-issuer) reaches the backend
	// with a token for that caller: the gateway exchanges the caller's
	// token (RFC 8693) at OAuth.Issuer, which must have issued it,
	// authenticated with OAuth's client credentials, for a token whose
	// resource is the backend, and keeps it for that caller and backend
	// until shortly before it expires. Each caller has a connection of
	// their own (1,000 at most, the least recently used closed first; closed after
	// 5 minutes unused); what the gateway lists and follows of
	// the backend, unasked by anyone, it asks as itself (the OAuth
	// client credentials). A caller without a token (stdio; -http
	// without OAuth) is refused the backend's tools, told why.
	AuthExchange = "exchange"
	// AuthUser: each caller signs in to the backend's own authorization
	// server (a third party's, such as a SaaS MCP server's), once, in a
	// browser: the first call of the backend's tools by a caller who has
	// not is answered with error -32042 (URL elicitation required) whose
	// URL, at the gateway (<http path>/signin/NAME), starts an
	// authorization code + PKCE flow as OAuth's client (its id and secret
	// registered there, its redirect URI <http path>/oauth/callback),
	// discovered from the backend's protected resource metadata and bound
	// to OAuth.Issuer. The callback page shows a one-time code, which the
	// caller gives to the tool <prefix>__confirm_sign_in (the token is
	// bound to no one before: the link may have been completed by someone
	// else); then the token is kept sealed per (caller, backend)
	// (Options.UserSignIn), refreshed before it expires, and used on a
	// connection of the caller's own, as AuthExchange's; the tool
	// <prefix>__sign_out forgets it. What the gateway lists of the
	// backend it lists as itself (OAuth's client credentials): every
	// caller sees the backend's tools, and a call goes as its caller.
	// Needs -http with OAuth (a caller principal) and Options.UserSignIn.
	AuthUser = "user"
)

// Per-caller connections of an AuthExchange backend.
const (
	defaultMaxCallers = 1000
	defaultCallerIdle = 5 * time.Minute
)

// Defaults for the zero fields of a Backend.
const (
	// DefaultTimeout answers a stalled request well before common
	// clients give up on their own (60 s for the TypeScript SDK's), so
	// that the client hears which backend stalled, and its stderr.
	DefaultTimeout       = 30 * time.Second
	defaultMaxTimeout    = 10 * time.Minute
	defaultMaxRestarts   = 5
	defaultRestartWindow = 60 * time.Second
	defaultCooldown      = 60 * time.Second
	defaultBackoff       = 250 * time.Millisecond
	defaultMaxBackoff    = 30 * time.Second
	defaultPingInterval  = 30 * time.Second
	defaultPingTimeout   = 10 * time.Second
	defaultIdleTimeout   = 10 * time.Minute
	DefaultRestartWait   = 3 * time.Second
)

// separator joins a backend's prefix and a name: valid in tool names, and
// the one the gateways that prefix already mostly use.
const separator = "__"

// withDefaults fills the zero fields.
func (b Backend) withDefaults() Backend {
	if b.Prefix == "" && !b.NoPrefix {
		b.Prefix = sanitizeName(b.Name)
	}
	set := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	set(&b.Timeout, DefaultTimeout)
	set(&b.MaxTimeout, defaultMaxTimeout)
	b.MaxTimeout = max(b.MaxTimeout, b.Timeout)
	set(&b.RestartWindow, defaultRestartWindow)
	set(&b.Cooldown, defaultCooldown)
	set(&b.Backoff, defaultBackoff)
	set(&b.MaxBackoff, defaultMaxBackoff)
	set(&b.PingInterval, defaultPingInterval)
	set(&b.PingTimeout, defaultPingTimeout)
	set(&b.IdleTimeout, defaultIdleTimeout)
	set(&b.RestartWait, DefaultRestartWait)
	if b.MaxRestarts == 0 {
		b.MaxRestarts = defaultMaxRestarts
	}
	return b
}

// LoadConfig reads a configuration file; see ParseConfig. The error
// names the file.
func LoadConfig(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(data, os.LookupEnv)
	if err == nil {
		err = cfg.LoadEnvFiles(filepath.Dir(file))
	}
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", file, err)
	}
	return cfg, nil
}

// LoadEnvFiles reads each backend's EnvFile (a relative path is taken
// from dir, the configuration file's folder) and puts its variables in
// the backend's Env, ahead of the entries Env had: "env" wins over
// "envFile", as in VS Code. The file holds KEY=value lines; blank lines
// and lines that start with # are skipped, "export " before a key is
// allowed, and a value may be quoted ("..." with \n, \t, \" and \\, or
// '...' as written); an unquoted value ends at " #". A file that cannot
// be read or has a line of another shape is a *ConfigError for its
// backend's "envFile"; every one is reported.
func (c *Config) LoadEnvFiles(dir string) error {
	var errs []error
	for i := range c.Backends {
		b := &c.Backends[i]
		if b.EnvFile == "" {
			continue
		}
		path := b.EnvFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		data, err := os.ReadFile(path)
		if err == nil {
			var vars []string
			if vars, err = parseEnvFile(data); err == nil {
				b.Env = append(vars, b.Env...)
				continue
			}
			err = fmt.Errorf("%s: %w", path, err)
		}
		errs = append(errs, &ConfigError{Backend: b.Name, Key: "envFile", Problem: err.Error()})
	}
	return errors.Join(errs...)
}

// parseEnvFile reads a dotenv file's KEY=value lines (see LoadEnvFiles).
func parseEnvFile(data []byte) ([]string, error) {
	var vars []string
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\x00\"'") {
			return nil, fmt.Errorf("line %d: want KEY=value", n+1)
		}
		v = strings.TrimSpace(v)
		switch {
		case strings.HasPrefix(v, `"`):
			end := closingQuote(v)
			if end < 0 {
				return nil, fmt.Errorf("line %d: a value opened with \" is not closed on its line", n+1)
			}
			v = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\"`, `"`, `\\`, `\`).Replace(v[1:end])
		case strings.HasPrefix(v, "'"):
			end := strings.IndexByte(v[1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("line %d: a value opened with ' is not closed on its line", n+1)
			}
			v = v[1 : end+1]
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		if strings.IndexByte(v, 0) >= 0 {
			return nil, fmt.Errorf("line %d: a value holds a NUL byte", n+1)
		}
		vars = append(vars, k+"="+v)
	}
	return vars, nil
}

// closingQuote is the index of the " that closes the value v opens, or -1.
func closingQuote(v string) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// ConfigError is one problem of a configuration file, naming the backend
// ("" for the top level) and the key.
type ConfigError struct {
	Backend string
	Key     string
	Problem string
}

func (e *ConfigError) Error() string {
	switch {
	case e.Backend == "" && e.Key == "":
		return e.Problem
	case e.Backend == "":
		return fmt.Sprintf("key %q: %s", e.Key, e.Problem)
	case e.Key == "":
		return fmt.Sprintf("backend %q: %s", e.Backend, e.Problem)
	}
	return fmt.Sprintf("backend %q: key %q: %s", e.Backend, e.Key, e.Problem)
}

// ParseConfig reads a configuration in the format Claude Desktop, Cursor,
// VS Code and Claude Code (.mcp.json) write: a JSON object whose
// "mcpServers" (or, as VS Code writes it, "servers") object maps each
// server's name to its "command", "args", "env" and "cwd", or, for a
// remote server, its "url" and "headers" (with "type" "http" or
// "streamable-http", as VS Code and Claude Code write it, or no "type", as
// Cursor does). Comments and trailing commas are allowed, as in VS Code's
// files. "${VAR}" and "${VAR:-default}" in command, args, env values,
// cwd, url and header values are replaced by lookupEnv's value (nil: no
// expansion); a variable that is not set and has no default is an error.
//
// The gateway's own keys, per server, all optional:
//
//	"prefix":        namespace of its tools, prompts, resources and templates ("" for none; default: the name)
//	"timeout":       bound on each request without progress, e.g. "30s" (a number is seconds)
//	"maxTimeout":    bound on a request whose progress extends its "timeout"
//	"maxRestarts":   restarts allowed within "restartWindow" before it is failed (0: none)
//	"restartWindow": e.g. "60s"
//	"backoff":       first wait before a restart, doubling up to "maxBackoff"
//	"maxBackoff":
//	"cooldown":      how long a failed backend stays down before a call may start it again
//	"restartWait":   how long a request waits for a restarting backend to be up (0: not at all)
//	"pingInterval":  how often it is pinged when idle (0: never)
//	"pingTimeout":   a ping not answered within it restarts the backend
//	"lazy":          true: started by the first request routed to it, stopped after "idleTimeout" without one
//	"idleTimeout":
//	"allowTools":    the only tool names (or path.Match patterns) to offer
//	"hideTools":     tool names (or path.Match patterns) not to offer
//	"access":        who may see and use its tools, prompts, resources and templates, by the
//	                 caller's OAuth access token: {"scopes": ["notes:read"], "claims": {"groups": ["ops"]}}
//	                 (every scope; for each claim one of its values); see Backend.Access
//	"toolAccess":    the same per tool name or path.Match pattern, demanded besides "access":
//	                 {"delete_*": {"scopes": ["notes:admin"]}}
//	"protocol":      "auto", "legacy", "modern" or a revision such as "2025-06-18"
//	"tools":         overrides per tool, by the backend's name of it (see ToolOverride):
//	                 {"search_code": {"name": "find", "title": "…", "description": "…",
//	                 "fixed": {"repo": "acme/app"}}}: a new name (the prefix still goes
//	                 before it), title or description; fixed arguments are set on every
//	                 call and left out of the offered inputSchema, and a call that sets one
//	                 is refused (-32602)
//	"disabled":      true: leave the server out
//	"oauth":         a remote server's OAuth client credentials and the authorization server
//	                 that issued them: {"issuer": "https://as.example", "clientId": "…",
//	                 "clientSecret": "${SECRET}" or "keyFile": "key.pem", "scopes": "a b"};
//	                 optional "metadataOrigins": ["https://…"], "allowPrivate": true
//	"auth":          whom a remote server's requests are made as: "service" (the default: the
//	                 gateway, with "headers" or "oauth") or "exchange" (each caller, by
//	                 token exchange at the "oauth" issuer; see AuthExchange)
//
// Beside "mcpServers", the gateway's top-level keys: "toolSearch" and
// "alwaysList" (Config.ToolSearch, Config.AlwaysList), and "endpoints",
// virtual endpoints by name (Config.Endpoints, see Endpoint):
//
//	"endpoints": {"dev": {"tools": ["fs__read_*"], "prompts": ["fs__*"],
//	              "resources": ["file:///docs/*"], "toolSearch": true,
//	              "access": {"claims": {"groups": ["dev"]}}}}
//
// "type" may be "stdio", "http" or "streamable-http" (or absent: then
// "url" makes a remote server); "sse", the HTTP+SSE transport of
// 2024-11-05, is an error, as is a server with both "command" and "url".
// Other keys are ignored, each with a warning in Config.Warnings. Every problem
// is a *ConfigError naming the backend and the key; all of them are
// reported, joined; the Config returned with them holds only the
// Warnings (a misspelt key is often why one is missing). ParseConfig
// reads no file: "envFile" is kept in Backend.EnvFile for
// Config.LoadEnvFiles (LoadConfig calls it).
func ParseConfig(data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	data = stripJSONC(data)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, syntaxError(data, err)
	}
	cfg := &Config{}
	var errs []error
	fail := func(backend, key, format string, a ...any) {
		errs = append(errs, &ConfigError{Backend: backend, Key: key, Problem: fmt.Sprintf(format, a...)})
	}
	serversKey := "mcpServers"
	servers, ok := top["mcpServers"]
	if vs, vsOK := top["servers"]; vsOK {
		if ok {
			return nil, &ConfigError{Key: "servers", Problem: `give the servers in "mcpServers" or in "servers", not both`}
		}
		servers, ok, serversKey = vs, true, "servers"
	}
	if !ok {
		return nil, &ConfigError{Key: "mcpServers", Problem: "missing: the file must be a JSON object with an \"mcpServers\" object of servers by name"}
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != serversKey && k != "$schema" && !searchKeys[k] && k != "endpoints" {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("config: key %q ignored", k))
		}
	}
	names, raws, err := orderedObject(servers)
	if err != nil {
		return nil, &ConfigError{Key: serversKey, Problem: err.Error()}
	}
	prefixes := map[string]string{}
	for i, name := range names {
		if name == "" {
			fail("", serversKey, "a server has an empty name")
			continue
		}
		if slices.Contains(names[:i], name) {
			fail(name, "", "defined twice")
			continue
		}
		b, disabled, warnings, berrs := parseBackend(name, raws[i], lookupEnv)
		cfg.Warnings = append(cfg.Warnings, warnings...)
		errs = append(errs, berrs...)
		if disabled || len(berrs) > 0 {
			continue
		}
		if p := b.withDefaults().Prefix; !b.NoPrefix {
			if other, ok := prefixes[p]; ok {
				fail(name, "prefix", "%q is also the prefix of backend %q: names would collide (set \"prefix\" on one of them)", p, other)
				continue
			}
			prefixes[p] = name
		}
		cfg.Backends = append(cfg.Backends, b)
	}
	errs = append(errs, parseSearchKeys(top, cfg)...)
	errs = append(errs, parseEndpoints(top, cfg)...)
	if len(errs) > 0 {
		return &Config{Warnings: cfg.Warnings}, errors.Join(errs...)
	}
	if len(cfg.Backends) == 0 {
		return nil, &ConfigError{Key: serversKey, Problem: "no server to run"}
	}
	return cfg, nil
}

// syntaxError says where a JSON syntax error is, as line:column.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return &ConfigError{Problem: fmt.Sprintf("line %d, column %d: %v", line, col, se)}
	case errors.As(err, &te):
		return &ConfigError{Problem: "the file must hold a JSON object"}
	}
	return &ConfigError{Problem: err.Error()}
}

func position(data []byte, offset int64) (line, col int) {
	offset = min(offset, int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}

// orderedObject reads a JSON object's members in the order written
// (encoding/json's maps forget it, and the order decides which backend
// keeps a name two of them offer).
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("must be an object of servers by name")
	}
	var names []string
	var raws []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, tok.(string))
		raws = append(raws, v)
	}
	return names, raws, nil
}

// standardKeys are keys other clients write that mean nothing to the
// gateway but are not mistakes: ignored without a warning.
var standardKeys = []string{"description", "autoApprove", "alwaysAllow", "transportType"}

func parseBackend(name string, raw json.RawMessage, lookupEnv func(string) (string, bool)) (b Backend, disabled bool, warnings []string, errs []error) {
	p := &entryParser{name: name, lookupEnv: lookupEnv}
	p.b.Name = name
	if err := json.Unmarshal(raw, &p.m); err != nil || p.m == nil {
		p.fail("", "must be an object with at least \"command\" (or, for a remote server, \"url\")")
		return p.b, false, nil, p.errs
	}
	if v, ok := p.m["disabled"]; ok {
		if err := json.Unmarshal(v, &disabled); err != nil {
			p.fail("disabled", "want true or false")
		} else if disabled {
			return p.b, true, []string{fmt.Sprintf("config: backend %q is disabled; not started", name)}, p.errs
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.m)) {
		if !slices.Contains(backendKeys, k) && !slices.Contains(standardKeys, k) {
			p.warnings = append(p.warnings, fmt.Sprintf("config: backend %q: key %q ignored", name, k))
		}
	}
	if !p.transport() {
		return p.b, false, p.warnings, p.errs
	}
	p.process()
	p.naming()
	p.policy()
	p.patterns("allowTools", &p.b.AllowTools)
	p.patterns("hideTools", &p.b.HideTools)
	p.access()
	p.overrides()
	if pr, ok := p.str("protocol", false); ok {
		if _, _, err := protocolOf(pr); err != nil {
			p.fail("protocol", "%v", err)
		}
		p.b.Protocol = pr
	}
	return p.b, false, p.warnings, p.errs
}

// entryParser reads one server's entry of a configuration into a Backend,
// in steps (transport, process, naming, policy, tools), collecting every
// error, each naming the backend and the key, rather than stopping at the
// first: a user fixes a file once.
type entryParser struct {
	name      string
	m         map[string]json.RawMessage
	lookupEnv func(string) (string, bool)
	b         Backend
	warnings  []string
	errs      []error
}

func (p *entryParser) fail(key, format string, a ...any) {
	p.errs = append(p.errs, &ConfigError{Backend: p.name, Key: key, Problem: fmt.Sprintf(format, a...)})
}

// expand replaces ${VAR} and ${VAR:-default} in the value of key.
func (p *entryParser) expand(key, s string) string {
	out, err := expandVars(s, p.lookupEnv)
	if err != nil {
		p.fail(key, "%v", err)
	}
	return out
}

// str reads a string member; ok is false when it is absent or not a string.
func (p *entryParser) str(key string, required bool) (string, bool) {
	v, ok := p.m[key]
	if !ok {
		if required {
			p.fail(key, "missing")
		}
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		p.fail(key, "want a string, got %s", clip(v))
		return "", false
	}
	return s, true
}

// dur reads a duration member into d, when present.
func (p *entryParser) dur(key string, d *time.Duration, allowZero bool) {
	v, ok := p.m[key]
	if !ok {
		return
	}
	got, err := parseDuration(v)
	switch {
	case err != nil:
		p.fail(key, "%v", err)
	case got < 0 || got == 0 && !allowZero:
		p.fail(key, "must be positive, got %s", clip(v))
	default:
		*d = got
	}
}

// transport decides whether the server is started (stdio) or connected to
// (a remote Streamable HTTP endpoint), and reads a remote one's url and
// headers; false when the entry cannot be read further.
func (p *entryParser) transport() bool {
	_, hasURL := p.m["url"]
	_, hasCommand := p.m["command"]
	remote := hasURL && !hasCommand
	if t, ok := p.str("type", false); ok {
		switch t {
		case "stdio":
			remote = false
		case "http", "streamable-http", "streamableHttp":
			remote = true
		case "sse":
			p.fail("type", `"sse" (the HTTP+SSE transport of 2024-11-05) is not supported: give the server's Streamable HTTP endpoint, with "type": "http"`)
			return false
		default:
			p.fail("type", "%q is not supported: want stdio, http or streamable-http (set \"disabled\": true to keep it in the file)", t)
			return false
		}
	}
	if hasURL && hasCommand {
		p.fail("url", `give "command" (a server the gateway starts) or "url" (a remote one), not both`)
		return false
	}
	if remote {
		p.remote()
		return true
	}
	if hasURL {
		p.fail("url", `a stdio server takes "command", not "url"`)
	}
	if _, ok := p.m["headers"]; ok {
		p.fail("headers", `only a remote server ("url") takes headers`)
	}
	if _, ok := p.m["oauth"]; ok {
		p.fail("oauth", `only a remote server ("url") takes oauth`)
	}
	if _, ok := p.m["auth"]; ok {
		p.fail("auth", `only a remote server ("url") takes auth: a server the gateway starts runs as the gateway`)
	}
	if c, ok := p.str("command", true); ok {
		if c == "" {
			p.fail("command", "must not be empty")
		}
		p.b.Command = p.expand("command", c)
	}
	return true
}

// process reads how a stdio server is started: args, env, cwd, envFile.
func (p *entryParser) process() {
	b := &p.b
	if v, ok := p.m["args"]; ok {
		if err := json.Unmarshal(v, &b.Args); err != nil {
			p.fail("args", "want an array of strings, got %s", clip(v))
		}
		for i, a := range b.Args {
			b.Args[i] = p.expand(fmt.Sprintf("args[%d]", i), a)
		}
	}
	if v, ok := p.m["env"]; ok {
		var env map[string]any
		if err := json.Unmarshal(v, &env); err != nil {
			p.fail("env", "want an object of strings, got %s", clip(v))
		}
		for _, k := range slices.Sorted(maps.Keys(env)) {
			key := "env." + k
			var s string
			switch x := env[k].(type) {
			case string:
				s = x
			case float64, bool:
				// Hand-written files say "PORT": 8080; the value is plain.
				s = fmt.Sprint(x)
			default:
				p.fail(key, "want a string")
				continue
			}
			if k == "" || strings.ContainsAny(k, "=\x00") {
				p.fail(key, "not a valid variable name")
				continue
			}
			b.Env = append(b.Env, k+"="+p.expand(key, s))
		}
	}
	if c, ok := p.str("cwd", false); ok {
		b.Dir = p.expand("cwd", c)
	}
	if f, ok := p.str("envFile", false); ok {
		if f == "" {
			p.fail("envFile", "must not be empty")
		}
		b.EnvFile = p.expand("envFile", f)
	}
}

// naming reads the prefix of the backend's names.
func (p *entryParser) naming() {
	pr, ok := p.str("prefix", false)
	switch {
	case !ok:
	case pr == "":
		p.b.NoPrefix = true
	case len(pr) > 64 || sanitizeName(pr) != pr:
		p.fail("prefix", "%q: use 1 to 64 of A-Z a-z 0-9 _ - . (it starts tool names)", pr)
	default:
		p.b.Prefix = pr
	}
}

// policy reads the timeouts, the restart policy, the pings and laziness.
func (p *entryParser) policy() {
	b := &p.b
	p.dur("timeout", &b.Timeout, false)
	p.dur("maxTimeout", &b.MaxTimeout, false)
	p.dur("restartWindow", &b.RestartWindow, false)
	p.dur("cooldown", &b.Cooldown, false)
	p.dur("backoff", &b.Backoff, false)
	p.dur("maxBackoff", &b.MaxBackoff, false)
	p.dur("pingTimeout", &b.PingTimeout, false)
	p.dur("idleTimeout", &b.IdleTimeout, false)
	if v, ok := p.m["restartWait"]; ok {
		if d, err := parseDuration(v); err == nil && d == 0 {
			b.RestartWait = -1 // 0 in the file: no wait; 0 in a Backend: the default
		} else {
			p.dur("restartWait", &b.RestartWait, false)
		}
	}
	if v, ok := p.m["pingInterval"]; ok {
		if d, err := parseDuration(v); err == nil && d == 0 {
			b.PingInterval = -1
		} else {
			p.dur("pingInterval", &b.PingInterval, false)
		}
	}
	if v, ok := p.m["maxRestarts"]; ok {
		var n float64
		if err := json.Unmarshal(v, &n); err != nil || n < 0 || n != math.Trunc(n) || n > 1e6 {
			p.fail("maxRestarts", "want a whole number >= 0, got %s", clip(v))
		} else if b.MaxRestarts = int(n); n == 0 {
			b.MaxRestarts = -1
		}
	}
	if v, ok := p.m["lazy"]; ok {
		if err := json.Unmarshal(v, &b.Lazy); err != nil {
			p.fail("lazy", "want true or false, got %s", clip(v))
		}
	}
	if b.MaxBackoff != 0 && b.Backoff > b.MaxBackoff {
		p.fail("maxBackoff", "must not be less than \"backoff\"")
	}
}

// patterns reads a list of tool names or path.Match patterns.
func (p *entryParser) patterns(key string, into *[]string) {
	v, ok := p.m[key]
	if !ok {
		return
	}
	if err := json.Unmarshal(v, into); err != nil || *into == nil {
		p.fail(key, "want an array of tool names or patterns, got %s", clip(v))
		return
	}
	for i, pat := range *into {
		if _, err := path.Match(pat, ""); err != nil {
			p.fail(fmt.Sprintf("%s[%d]", key, i), "%q is not a valid pattern", pat)
		}
	}
}

// access reads "access" and "toolAccess".
func (p *entryParser) access() {
	if v, ok := p.m["access"]; ok {
		p.b.Access = p.accessValue("access", v)
	}
	v, ok := p.m["toolAccess"]
	if !ok {
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		p.fail("toolAccess", `want an object of tool names or patterns to {"scopes": […], "claims": {…}}, got %s`, clip(v))
		return
	}
	p.b.ToolAccess = map[string]*handlers.Access{}
	for _, pat := range slices.Sorted(maps.Keys(m)) {
		key := "toolAccess[" + strconv.Quote(pat) + "]"
		if _, err := path.Match(pat, ""); err != nil || pat == "" {
			p.fail(key, "%q is not a valid pattern", pat)
			continue
		}
		if a := p.accessValue(key, m[pat]); a != nil {
			p.b.ToolAccess[pat] = a
		}
	}
}

// accessValue reads {"scopes": ["a", …], "claims": {"name": "value" or
// ["value", …]}}: scopes are scope tokens (RFC 6749: no space, quote or
// backslash), and a claim needs at least one value.
func (p *entryParser) accessValue(key string, v json.RawMessage) *handlers.Access {
	var raw struct {
		Scopes []string                   `json:"scopes"`
		Claims map[string]json.RawMessage `json:"claims"`
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		p.fail(key, `want {"scopes": ["…"], "claims": {"name": ["value", …]}}, got %s`, clip(v))
		return nil
	}
	a := &handlers.Access{}
	for _, s := range raw.Scopes {
		if !scopeToken(s) {
			p.fail(key, "scope %q is not a scope token (no spaces, quotes or backslashes)", s)
			return nil
		}
		if !slices.Contains(a.Scopes, s) {
			a.Scopes = append(a.Scopes, s)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(raw.Claims)) {
		cv := raw.Claims[name]
		var one string
		var values []string
		if json.Unmarshal(cv, &one) == nil {
			values = []string{one}
		} else if json.Unmarshal(cv, &values) != nil || len(values) == 0 {
			p.fail(key, "claim %q: want a string or a non-empty array of strings, got %s", name, clip(cv))
			return nil
		}
		if a.Claims == nil {
			a.Claims = map[string][]string{}
		}
		a.Claims[name] = values
	}
	if len(a.Scopes) == 0 && len(a.Claims) == 0 {
		p.fail(key, "names no scope and no claim: leave it out to let every caller in")
		return nil
	}
	return a
}

// scopeToken reports whether s is a scope token (RFC 6749 section 3.3).
func scopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
			return false
		}
	}
	return true
}

// toolAccess is what a caller needs for the backend's tool of this name
// (the backend's own): Access, and every matching ToolAccess entry's.
func (b *Backend) toolAccess(tool string) *handlers.Access {
	a := b.Access
	for _, pat := range slices.Sorted(maps.Keys(b.ToolAccess)) {
		if matchAny([]string{pat}, tool) {
			a = a.Join(b.ToolAccess[pat])
		}
	}
	return a
}

// remote reads a remote server's "url" and "headers", and refuses
// the keys of a process.
func (p *entryParser) remote() {
	b, m := &p.b, p.m
	for _, k := range []string{"args", "env", "envFile", "cwd"} {
		if _, ok := m[k]; ok {
			p.fail(k, `a remote server ("url") takes no %q`, k)
		}
	}
	if u, ok := p.str("url", true); ok {
		b.URL = p.expand("url", u)
		if pu, err := url.Parse(b.URL); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			p.fail("url", "%q is not an http:// or https:// URL", b.URL)
		}
	}
	p.oauth()
	p.auth()
	v, ok := m["headers"]
	if !ok {
		return
	}
	var hs map[string]any
	if err := json.Unmarshal(v, &hs); err != nil {
		p.fail("headers", "want an object of strings, got %s", clip(v))
		return
	}
	b.Headers = map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(hs)) {
		key := "headers." + k
		s, ok := hs[k].(string)
		if !ok {
			p.fail(key, "want a string")
			continue
		}
		if !validHeaderName(k) {
			p.fail(key, "not a valid header name")
			continue
		}
		val := p.expand(key, s)
		if strings.ContainsAny(val, "\r\n\x00") {
			p.fail(key, "the value holds a line break")
			continue
		}
		if b.OAuth != nil && strings.EqualFold(k, "Authorization") {
			// Two credentials for one server: which one it gets would
			// depend on whether a token was obtained yet.
			p.fail(key, `an "oauth" block gets this server's tokens: give it no Authorization header too`)
			continue
		}
		b.Headers[k] = val
	}
}

// auth reads a remote server's "auth" mode (after its "oauth" block).
func (p *entryParser) auth() {
	if _, ok := p.m["auth"]; !ok {
		return
	}
	mode, ok := p.str("auth", false)
	if !ok {
		return
	}
	switch mode {
	case AuthService:
	case AuthExchange:
		if _, ok := p.m["oauth"]; !ok {
			p.fail("auth", `"exchange" needs an "oauth" block: the authorization server to exchange callers' tokens at ("issuer") and the gateway's client credentials there`)
			return
		}
	case AuthUser:
		if _, ok := p.m["oauth"]; !ok {
			p.fail("auth", `"user" needs an "oauth" block: the gateway's client at the server's own authorization server ("issuer", "clientId", "clientSecret"), whose redirect URI is the gateway's <http path>/oauth/callback`)
			return
		}
	default:
		p.fail("auth", `%q is not a mode: want "service" (the gateway's own credentials), "exchange" (each caller's, by token exchange) or "user" (each caller signs in)`, mode)
		return
	}
	p.b.Auth = mode
}

// oauth reads a remote server's "oauth" block.
func (p *entryParser) oauth() {
	v, ok := p.m["oauth"]
	if !ok {
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		p.fail("oauth", `want an object: {"issuer": "https://…", "clientId": "…", "clientSecret": "…" or "keyFile": "…", "scopes": "…"}`)
		return
	}
	o := &OAuth{}
	str := func(key string) string {
		raw, ok := m[key]
		if !ok {
			return ""
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			p.fail("oauth."+key, "want a string")
			return ""
		}
		return p.expand("oauth."+key, s)
	}
	for k := range m {
		if !slices.Contains([]string{"issuer", "clientId", "clientSecret", "keyFile", "scopes", "metadataOrigins", "allowPrivate"}, k) {
			p.fail("oauth."+k, "unknown key (want issuer, clientId, clientSecret, keyFile, scopes, metadataOrigins, allowPrivate)")
		}
	}
	o.Issuer, o.ClientID, o.ClientSecret, o.KeyFile = str("issuer"), str("clientId"), str("clientSecret"), str("keyFile")
	if raw, ok := m["allowPrivate"]; ok && json.Unmarshal(raw, &o.AllowPrivate) != nil {
		p.fail("oauth.allowPrivate", "want true or false")
	}
	if raw, ok := m["metadataOrigins"]; ok {
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			p.fail("oauth.metadataOrigins", `want a list of origins: ["https://host"]`)
		}
		for i, o2 := range list {
			u, err := url.Parse(p.expand(fmt.Sprintf("oauth.metadataOrigins[%d]", i), o2))
			if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
				p.fail(fmt.Sprintf("oauth.metadataOrigins[%d]", i), "%q is not an https origin (https://host[:port])", o2)
				continue
			}
			o.MetadataOrigins = append(o.MetadataOrigins, "https://"+strings.ToLower(u.Host))
		}
	}
	if raw, ok := m["scopes"]; ok {
		var list []string
		if json.Unmarshal(raw, &list) == nil {
			for i, sc := range list {
				o.Scopes = append(o.Scopes, strings.Fields(p.expand(fmt.Sprintf("oauth.scopes[%d]", i), sc))...)
			}
		} else {
			o.Scopes = strings.FieldsFunc(str("scopes"), func(r rune) bool { return r == ' ' || r == ',' })
		}
	}
	switch {
	case o.ClientID == "":
		p.fail("oauth.clientId", "missing")
	case (o.ClientSecret == "") == (o.KeyFile == ""):
		p.fail("oauth", `give "clientSecret" or "keyFile", one of them`)
	}
	// Without the issuer, the secret would go to whichever
	// authorization server the backend names: to the backend.
	if o.Issuer == "" {
		p.fail("oauth.issuer", "missing: the authorization server that issued the client credentials (https://…); they are sent to no other")
	} else if !secureOrLoopback(o.Issuer) {
		p.fail("oauth.issuer", "%q is not an https URL (plain http is for loopback only)", o.Issuer)
	}
	// Tokens to a backend in clear, where anyone on the path can take
	// them: https, or http on loopback.
	if p.b.URL != "" && !secureOrLoopback(p.b.URL) {
		p.fail("url", `a server with an "oauth" block must be https (plain http is for loopback only): its tokens would travel in clear`)
	}
	p.b.OAuth = o
}

// secureOrLoopback: an https URL, or an http one on loopback (localhost
// or a loopback address).
func secureOrLoopback(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		ip := net.ParseIP(h)
		return strings.EqualFold(h, "localhost") || (ip != nil && ip.IsLoopback())
	}
	return false
}

// validHeaderName: an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !validNameChar(c) && !strings.ContainsRune("!#$%&'*+^`|~", rune(c)) {
			return false
		}
	}
	return true
}

var backendKeys = []string{"command", "args", "env", "envFile", "cwd", "type", "url", "headers", "oauth", "auth", "disabled",
	"prefix", "timeout", "maxTimeout", "maxRestarts", "restartWindow", "cooldown", "backoff", "maxBackoff", "restartWait",
	"pingInterval", "pingTimeout", "lazy", "idleTimeout", "allowTools", "hideTools", "access", "toolAccess", "protocol", "tools"}

// protocolOf reads a Backend's Protocol as the client's era and version.
func protocolOf(p string) (client.Era, string, error) {
	switch p {
	case "", "auto":
		return client.EraAuto, "", nil
	case "legacy":
		return client.EraLegacy, "", nil
	case "modern":
		return client.EraModern, "", nil
	}
	era, ok := client.VersionEra(p)
	if !ok {
		return 0, "", fmt.Errorf("%q: want auto, legacy, modern or one of %s", p, strings.Join(mcp.SupportedVersions(), ", "))
	}
	return era, p, nil
}

// parseDuration reads "1m30s" as time.ParseDuration does, or a number of
// seconds (as Cline writes "timeout": 60).
func parseDuration(v json.RawMessage) (time.Duration, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (like \"30s\", \"1m\" or \"500ms\")", s)
		}
		return d, nil
	}
	var n float64
	if err := json.Unmarshal(v, &n); err != nil || n > math.MaxInt64/float64(time.Second) {
		return 0, fmt.Errorf("want a duration (like \"30s\") or a number of seconds, got %s", clip(v))
	}
	return time.Duration(n * float64(time.Second)), nil
}

// expandVars replaces ${VAR} and ${VAR:-default}.
func expandVars(s string, lookupEnv func(string) (string, bool)) (string, error) {
	if lookupEnv == nil || !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("%q: unterminated ${", s)
		}
		b.WriteString(s[:i])
		ref := s[i+2 : i+j]
		name, def, hasDef := strings.Cut(ref, ":-")
		if name == "" {
			return "", fmt.Errorf("%q: empty variable name in ${}", s)
		}
		if v, ok := lookupEnv(name); ok && (v != "" || !hasDef) {
			b.WriteString(v)
		} else if hasDef {
			b.WriteString(def)
		} else {
			return "", fmt.Errorf("${%s} is not set (give a default with ${%s:-value})", name, name)
		}
		s = s[i+j+1:]
	}
}

func clip(v json.RawMessage) string {
	s := string(bytes.TrimSpace(v))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// sanitizeName replaces every character a tool name cannot hold by '_'.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !validNameChar(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func validNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// hidden reports whether the gateway leaves a backend tool out: not in
// AllowTools (when set), or in HideTools.
func (b *Backend) hidden(tool string) bool {
	return b.AllowTools != nil && !matchAny(b.AllowTools, tool) || matchAny(b.HideTools, tool)
}

// matchAny reports whether name is one of names, or matches one of them
// as a path.Match pattern.
func matchAny(names []string, name string) bool {
	for _, p := range names {
		if p == name {
			return true
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
