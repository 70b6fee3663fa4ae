package gateway

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// A Claude Desktop file, as it writes it, is a valid configuration; the
// order of the servers is the file's.
func TestParseConfigClaudeDesktop(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "everything": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"],
      "env": {"DEBUG": "1", "PORT": 8080},
      "cwd": "/tmp"
    },
    "a@b/c d": {"command": "x"}
  }
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
	var names []string
	for _, b := range cfg.Backends {
		names = append(names, b.Name)
	}
	if !slices.Equal(names, []string{"filesystem", "everything", "a@b/c d"}) {
		t.Fatalf("order %q", names)
	}
	ev := cfg.Backends[1]
	if ev.Command != "npx" || !slices.Equal(ev.Args, []string{"-y", "@modelcontextprotocol/server-everything"}) ||
		!slices.Equal(ev.Env, []string{"DEBUG=1", "PORT=8080"}) || ev.Dir != "/tmp" {
		t.Errorf("everything: %+v", ev)
	}
	// Defaults are applied when the gateway uses a backend.
	d := cfg.Backends[2].withDefaults()
	if d.Prefix != "a_b_c_d" || d.Timeout != DefaultTimeout || d.MaxRestarts != defaultMaxRestarts || d.PingInterval != defaultPingInterval {
		t.Errorf("defaults: %+v", d)
	}
}

// VS Code's mcp.json: "servers", comments, trailing commas, "type": "stdio".
func TestParseConfigVSCode(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{
	// VS Code writes comments
	"servers": {
		"git": {
			"type": "stdio", /* and these */
			"command": "uvx",
			"args": ["mcp-server-git",],
		},
	},
	"inputs": [],
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Backends) != 1 || cfg.Backends[0].Command != "uvx" || !slices.Equal(cfg.Backends[0].Args, []string{"mcp-server-git"}) {
		t.Fatalf("%+v", cfg.Backends)
	}
	if !slices.Equal(cfg.Warnings, []string{`config: key "inputs" ignored`}) {
		t.Errorf("warnings %q", cfg.Warnings)
	}
}

// Remote servers as VS Code and Claude Code ("type": "http"), Cursor (a
// bare "url") and others ("streamable-http") write them, with headers and
// variables; the gateway's own keys apply to them too.
func TestParseConfigRemote(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {
		"vscode": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
		"cursor": {"url": "http://127.0.0.1:${PORT:-8080}/mcp", "timeout": "5s", "protocol": "legacy"},
		"other":  {"type": "streamable-http", "url": "https://u:p@x.example/mcp", "description": "ignored quietly"}
	}}`), env(map[string]string{"TOKEN": "t0k"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
	if len(cfg.Backends) != 3 {
		t.Fatalf("%+v", cfg.Backends)
	}
	v, c, o := cfg.Backends[0], cfg.Backends[1], cfg.Backends[2]
	if v.URL != "https://mcp.example.com/mcp" || v.Command != "" || v.Headers["Authorization"] != "Bearer t0k" || len(v.Headers) != 1 {
		t.Errorf("vscode: %+v", v)
	}
	if c.URL != "http://127.0.0.1:8080/mcp" || c.Timeout != 5*time.Second || c.Protocol != "legacy" || c.Headers != nil {
		t.Errorf("cursor: %+v", c)
	}
	if o.URL != "https://u:p@x.example/mcp" {
		t.Errorf("other: %+v", o)
	}
	oc, err := ParseConfig([]byte(`{"mcpServers": {
		"a": {"url": "https://a.example/mcp", "auth": "exchange", "oauth": {"issuer": "https://as.example", "clientId": "gw", "clientSecret": "${SECRET}", "scopes": "mcp:tools, mcp:admin"}},
		"b": {"url": "https://b.example/mcp", "oauth": {"issuer": "http://127.0.0.1:9000", "clientId": "${ID:-gw2}", "keyFile": "/k.pem", "scopes": ["x y", "z"],
			"metadataOrigins": ["https://Meta.example"], "allowPrivate": true}}
	}}`), env(map[string]string{"SECRET": "s3"}))
	if err != nil {
		t.Fatal(err)
	}
	if a := oc.Backends[0].OAuth; a == nil || a.Issuer != "https://as.example" || a.ClientID != "gw" || a.ClientSecret != "s3" || fmt.Sprint(a.Scopes) != "[mcp:tools mcp:admin]" {
		t.Errorf("oauth a: %+v", a)
	}
	if oc.Backends[0].Auth != AuthExchange || oc.Backends[1].Auth != "" {
		t.Errorf("auth: %q %q", oc.Backends[0].Auth, oc.Backends[1].Auth)
	}
	if b := oc.Backends[1].OAuth; b == nil || b.ClientID != "gw2" || b.KeyFile != "/k.pem" || fmt.Sprint(b.Scopes) != "[x y z]" ||
		fmt.Sprint(b.MetadataOrigins) != "[https://meta.example]" || !b.AllowPrivate {
		t.Errorf("oauth b: %+v", b)
	}
	if _, err := New(cfg, Options{}); err != nil {
		t.Errorf("New: %v", err)
	}
	if _, err := New(&Config{Backends: []Backend{{Name: "both", Command: "x", URL: "http://x/mcp"}}}, Options{}); err == nil {
		t.Error("New took a backend with a command and a URL")
	}
}

func TestParseConfigGatewayKeys(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {
		"a": {"command": "a", "prefix": "x", "timeout": "1.5s", "maxRestarts": 2, "restartWindow": 10,
		      "cooldown": "1m", "backoff": "10ms", "maxBackoff": "1s", "pingInterval": "5s", "pingTimeout": "2s", "restartWait": "500ms",
		      "lazy": true, "idleTimeout": "30s", "allowTools": ["read_*", "rm", "write"], "hideTools": ["rm", "delete_*"], "protocol": "2025-06-18", "autoApprove": [], "colour": "red"},
		"b": {"command": "b", "prefix": "", "maxRestarts": 0, "pingInterval": 0, "restartWait": 0},
		"off": {"command": "c", "disabled": true}
	}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Backends[0], cfg.Backends[1].withDefaults()
	want := Backend{Name: "a", Command: "a", Prefix: "x", Timeout: 1500 * time.Millisecond, MaxRestarts: 2,
		RestartWindow: 10 * time.Second, Cooldown: time.Minute, Backoff: 10 * time.Millisecond, MaxBackoff: time.Second,
		PingInterval: 5 * time.Second, PingTimeout: 2 * time.Second, RestartWait: 500 * time.Millisecond, Lazy: true, IdleTimeout: 30 * time.Second,
		AllowTools: []string{"read_*", "rm", "write"}, HideTools: []string{"rm", "delete_*"}, Protocol: "2025-06-18"}
	if !equalBackend(a, want) {
		t.Errorf("a:\n got %+v\nwant %+v", a, want)
	}
	for tool, hidden := range map[string]bool{"read_file": false, "write": false, "rm": true, "remove": true, "delete_all": true} {
		if a.hidden(tool) != hidden {
			t.Errorf("allowTools and hideTools: hidden(%q) = %v", tool, !hidden)
		}
	}
	if b.hidden("remove") {
		t.Error("without allowTools or hideTools, a tool is hidden")
	}
	if !b.NoPrefix || b.Prefix != "" || b.MaxRestarts != -1 || b.PingInterval >= 0 || b.RestartWait >= 0 {
		t.Errorf("b: %+v", b)
	}
	if len(cfg.Backends) != 2 {
		t.Errorf("the disabled backend is configured: %+v", cfg.Backends)
	}
	wantWarn := []string{`config: backend "a": key "colour" ignored`, `config: backend "off" is disabled; not started`}
	if !slices.Equal(cfg.Warnings, wantWarn) {
		t.Errorf("warnings %q, want %q", cfg.Warnings, wantWarn)
	}
}

func equalBackend(a, b Backend) bool {
	return a.Name == b.Name && a.Command == b.Command && slices.Equal(a.Args, b.Args) && slices.Equal(a.Env, b.Env) &&
		a.Dir == b.Dir && a.Prefix == b.Prefix && a.NoPrefix == b.NoPrefix && a.Timeout == b.Timeout &&
		a.MaxRestarts == b.MaxRestarts && a.RestartWindow == b.RestartWindow && a.Cooldown == b.Cooldown &&
		a.Backoff == b.Backoff && a.MaxBackoff == b.MaxBackoff && a.PingInterval == b.PingInterval &&
		a.PingTimeout == b.PingTimeout && a.Lazy == b.Lazy && a.IdleTimeout == b.IdleTimeout && slices.Equal(a.HideTools, b.HideTools) &&
		slices.Equal(a.AllowTools, b.AllowTools) && (a.AllowTools == nil) == (b.AllowTools == nil) &&
		a.Protocol == b.Protocol && a.RestartWait == b.RestartWait
}

func TestParseConfigExpandsVariables(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {"a": {
		"command": "${HOME}/bin/srv", "args": ["--token", "${TOKEN}", "${MISSING:-fallback}", "${EMPTY:-used}"],
		"env": {"KEY": "k-${TOKEN}"}, "cwd": "${HOME}"}}}`),
		env(map[string]string{"HOME": "/home/me", "TOKEN": "s3cret", "EMPTY": ""}))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Backends[0]
	if b.Command != "/home/me/bin/srv" || !slices.Equal(b.Args, []string{"--token", "s3cret", "fallback", "used"}) ||
		!slices.Equal(b.Env, []string{"KEY=k-s3cret"}) || b.Dir != "/home/me" {
		t.Errorf("%+v", b)
	}
}

// Every problem names the backend and the key, and all of them are
// reported at once.
func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string // each must be in the error
	}{
		{"not json", `{"mcpServers": {`, []string{"line 1, column 16"}},
		{"syntax line", "{\n \"mcpServers\": {\n  \"a\": {\"command\": \"x\",, }\n }\n}", []string{"line 3, column 26"}},
		{"not an object", `[1]`, []string{"must hold a JSON object"}},
		{"no servers", `{"other": {}}`, []string{`key "mcpServers": missing`}},
		{"both keys", `{"mcpServers": {}, "servers": {}}`, []string{`key "servers": give the servers in "mcpServers" or in "servers", not both`}},
		{"servers not object", `{"mcpServers": []}`, []string{`key "mcpServers": must be an object`}},
		{"empty", `{"mcpServers": {}}`, []string{`key "mcpServers": no server to run`}},
		{"only disabled", `{"mcpServers": {"a": {"command": "x", "disabled": true}}}`, []string{`no server to run`}},
		{"empty name", `{"mcpServers": {"": {"command": "x"}}}`, []string{`key "mcpServers": a server has an empty name`}},
		{"twice", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, []string{`backend "a": defined twice`}},
		{"backend not object", `{"mcpServers": {"a": "npx"}}`, []string{`backend "a": must be an object`}},
		{"no command", `{"mcpServers": {"a": {"args": []}}}`, []string{`backend "a": key "command": missing`}},
		{"empty command", `{"mcpServers": {"a": {"command": ""}}}`, []string{`backend "a": key "command": must not be empty`}},
		{"command type", `{"mcpServers": {"a": {"command": ["npx"]}}}`, []string{`backend "a": key "command": want a string, got ["npx"]`}},
		{"args type", `{"mcpServers": {"a": {"command": "x", "args": "-y"}}}`, []string{`backend "a": key "args": want an array of strings`}},
		{"args item", `{"mcpServers": {"a": {"command": "x", "args": ["a", 1]}}}`, []string{`backend "a": key "args": want an array of strings`}},
		{"env type", `{"mcpServers": {"a": {"command": "x", "env": ["A=1"]}}}`, []string{`backend "a": key "env": want an object of strings`}},
		{"env value", `{"mcpServers": {"a": {"command": "x", "env": {"A": {"b": 1}}}}}`, []string{`backend "a": key "env.A": want a string`}},
		{"env name", `{"mcpServers": {"a": {"command": "x", "env": {"A=B": "1"}}}}`, []string{`backend "a": key "env.A=B": not a valid variable name`}},
		{"cwd type", `{"mcpServers": {"a": {"command": "x", "cwd": 1}}}`, []string{`backend "a": key "cwd": want a string`}},
		{"type sse", `{"mcpServers": {"a": {"type": "sse", "url": "https://x/sse"}}}`, []string{`backend "a": key "type": "sse" (the HTTP+SSE transport of 2024-11-05) is not supported`}},
		{"type other", `{"mcpServers": {"a": {"type": "ws", "url": "wss://x"}}}`, []string{`backend "a": key "type": "ws" is not supported: want stdio, http or streamable-http`}},
		{"url and command", `{"mcpServers": {"a": {"url": "https://x/mcp", "command": "x"}}}`, []string{`backend "a": key "url": give "command" (a server the gateway starts) or "url" (a remote one), not both`}},
		{"http without url", `{"mcpServers": {"a": {"type": "http"}}}`, []string{`backend "a": key "url": missing`}},
		{"stdio with url", `{"mcpServers": {"a": {"type": "stdio", "url": "https://x/mcp"}}}`, []string{`backend "a": key "url": a stdio server takes "command", not "url"`, `backend "a": key "command": missing`}},
		{"url not http", `{"mcpServers": {"a": {"url": "ftp://x/mcp"}}}`, []string{`backend "a": key "url": "ftp://x/mcp" is not an http:// or https:// URL`}},
		{"remote with args", `{"mcpServers": {"a": {"url": "https://x/mcp", "args": ["-v"], "env": {}}}}`, []string{`backend "a": key "args": a remote server ("url") takes no "args"`, `key "env": a remote server`}},
		{"headers type", `{"mcpServers": {"a": {"url": "https://x/mcp", "headers": ["A: b"]}}}`, []string{`backend "a": key "headers": want an object of strings`}},
		{"header value", `{"mcpServers": {"a": {"url": "https://x/mcp", "headers": {"X-N": 1, "Bad Name": "v", "X-T": "${NOPE}"}}}}`, []string{`key "headers.X-N": want a string`, `key "headers.Bad Name": not a valid header name`, `key "headers.X-T": ${NOPE} is not set`}},
		{"stdio headers", `{"mcpServers": {"a": {"command": "x", "headers": {"A": "b"}}}}`, []string{`backend "a": key "headers": only a remote server ("url") takes headers`}},
		{"stdio oauth", `{"mcpServers": {"a": {"command": "x", "oauth": {"clientId": "c", "clientSecret": "s"}}}}`, []string{`backend "a": key "oauth": only a remote server ("url") takes oauth`}},
		{"oauth type", `{"mcpServers": {"a": {"url": "https://x/mcp", "oauth": "c:s"}}}`, []string{`backend "a": key "oauth": want an object`}},
		{"oauth no id", `{"mcpServers": {"a": {"url": "https://x/mcp", "oauth": {"issuer": "https://as", "clientSecret": "s"}}}}`, []string{`backend "a": key "oauth.clientId": missing`}},
		{"oauth and a bearer header", `{"mcpServers": {"a": {"url": "https://x/mcp", "oauth": {"issuer": "https://as", "clientId": "c", "clientSecret": "s"}, "headers": {"authorization": "Bearer t"}}}}`, []string{`backend "a": key "headers.authorization": an "oauth" block gets this server's tokens: give it no Authorization header too`}},
		{"oauth both", `{"mcpServers": {"a": {"url": "https://x/mcp", "oauth": {"issuer": "https://as", "clientId": "c", "clientSecret": "s", "keyFile": "k"}}}}`, []string{`backend "a": key "oauth": give "clientSecret" or "keyFile", one of them`}},
		{"oauth key", `{"mcpServers": {"a": {"url": "https://x/mcp", "oauth": {"issuer": "https://as", "clientId": "c", "clientSecret": "${NOPE}", "secret": "x"}}}}`, []string{`key "oauth.clientSecret": ${NOPE} is not set`, `key "oauth.secret": unknown key`}},
		// Issue 31, item 1: a secret without the issuer it belongs to
		// would be offered to whichever authorization server the backend
		// names.
		{"auth stdio", `{"mcpServers": {"a": {"command": "x", "auth": "exchange"}}}`, []string{`backend "a": key "auth": only a remote server ("url") takes auth`}},
		{"auth without oauth", `{"mcpServers": {"a": {"url": "https://x/mcp", "auth": "exchange"}}}`, []string{`backend "a": key "auth": "exchange" needs an "oauth" block`}},
		{"auth user", `{"mcpServers": {"a": {"url": "https://x/mcp", "auth": "user"}}}`, []string{`backend "a": key "auth": "user" needs an "oauth" block`}},
		{"auth unknown", `{"mcpServers": {"a": {"url": "https://x/mcp", "auth": "root"}}}`, []string{`backend "a": key "auth": "root" is not a mode`}},
		{"oauth no issuer", `{"mcpServers": {"a": {"url": "https://x/mcp", "oauth": {"clientId": "c", "clientSecret": "s"}}}}`, []string{`backend "a": key "oauth.issuer": missing`}},
		// Issue 31, items 3 and 11: OAuth 2.1 §1.5, TLS for the
		// authorization server and for the bearer tokens (RFC 6750 §5.3).
		{"oauth http issuer", `{"mcpServers": {"a": {"url": "https://x/mcp", "oauth": {"issuer": "http://as.example", "clientId": "c", "clientSecret": "s"}}}}`, []string{`backend "a": key "oauth.issuer": "http://as.example" is not an https URL`}},
		{"oauth http url", `{"mcpServers": {"a": {"url": "http://x.example/mcp", "oauth": {"issuer": "https://as", "clientId": "c", "clientSecret": "s"}}}}`, []string{`backend "a": key "url": a server with an "oauth" block must be https`}},
		{"oauth origins", `{"mcpServers": {"a": {"url": "https://x/mcp", "oauth": {"issuer": "https://as", "clientId": "c", "clientSecret": "s", "metadataOrigins": ["http://m", "https://m/path"], "allowPrivate": "yes"}}}}`, []string{`key "oauth.metadataOrigins[0]": "http://m" is not an https origin`, `key "oauth.metadataOrigins[1]"`, `key "oauth.allowPrivate": want true or false`}},
		{"prefix chars", `{"mcpServers": {"a": {"command": "x", "prefix": "a b"}}}`, []string{`backend "a": key "prefix": "a b": use 1 to 64 of`}},
		{"prefix type", `{"mcpServers": {"a": {"command": "x", "prefix": 1}}}`, []string{`backend "a": key "prefix": want a string`}},
		{"same prefix", `{"mcpServers": {"a": {"command": "x", "prefix": "p"}, "b": {"command": "y", "prefix": "p"}}}`, []string{`backend "b": key "prefix": "p" is also the prefix of backend "a"`}},
		{"default prefix clash", `{"mcpServers": {"a b": {"command": "x"}, "a_b": {"command": "y"}}}`, []string{`backend "a_b": key "prefix": "a_b" is also the prefix of backend "a b"`}},
		{"timeout text", `{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`, []string{`backend "a": key "timeout": "soon" is not a duration`}},
		{"timeout zero", `{"mcpServers": {"a": {"command": "x", "timeout": 0}}}`, []string{`backend "a": key "timeout": must be positive, got 0`}},
		{"timeout negative", `{"mcpServers": {"a": {"command": "x", "timeout": "-1s"}}}`, []string{`backend "a": key "timeout": must be positive`}},
		{"timeout type", `{"mcpServers": {"a": {"command": "x", "timeout": true}}}`, []string{`backend "a": key "timeout": want a duration`}},
		{"window", `{"mcpServers": {"a": {"command": "x", "restartWindow": "x"}}}`, []string{`backend "a": key "restartWindow"`}},
		{"cooldown", `{"mcpServers": {"a": {"command": "x", "cooldown": -5}}}`, []string{`backend "a": key "cooldown": must be positive`}},
		{"backoff order", `{"mcpServers": {"a": {"command": "x", "backoff": "2s", "maxBackoff": "1s"}}}`, []string{`backend "a": key "maxBackoff": must not be less than "backoff"`}},
		{"ping", `{"mcpServers": {"a": {"command": "x", "pingTimeout": "0s"}}}`, []string{`backend "a": key "pingTimeout": must be positive`}},
		{"ping interval", `{"mcpServers": {"a": {"command": "x", "pingInterval": "often"}}}`, []string{`backend "a": key "pingInterval": "often" is not a duration`}},
		{"idle", `{"mcpServers": {"a": {"command": "x", "idleTimeout": []}}}`, []string{`backend "a": key "idleTimeout": want a duration`}},
		{"restarts", `{"mcpServers": {"a": {"command": "x", "maxRestarts": 1.5}}}`, []string{`backend "a": key "maxRestarts": want a whole number >= 0, got 1.5`}},
		{"restarts negative", `{"mcpServers": {"a": {"command": "x", "maxRestarts": -1}}}`, []string{`backend "a": key "maxRestarts": want a whole number`}},
		{"lazy", `{"mcpServers": {"a": {"command": "x", "lazy": "yes"}}}`, []string{`backend "a": key "lazy": want true or false`}},
		{"protocol", `{"mcpServers": {"a": {"command": "x", "protocol": "2019-01-01"}}}`, []string{`backend "a": key "protocol": "2019-01-01": want auto, legacy, modern or one of 2026-07-28,`}},
		{"disabled", `{"mcpServers": {"a": {"command": "x", "disabled": 1}}}`, []string{`backend "a": key "disabled": want true or false`}},
		{"hide type", `{"mcpServers": {"a": {"command": "x", "hideTools": "rm"}}}`, []string{`backend "a": key "hideTools": want an array`}},
		{"hide pattern", `{"mcpServers": {"a": {"command": "x", "hideTools": ["ok", "[bad"]}}}`, []string{`backend "a": key "hideTools[1]": "[bad" is not a valid pattern`}},
		{"allow type", `{"mcpServers": {"a": {"command": "x", "allowTools": null}}}`, []string{`backend "a": key "allowTools": want an array`}},
		{"allow pattern", `{"mcpServers": {"a": {"command": "x", "allowTools": ["[bad"]}}}`, []string{`backend "a": key "allowTools[0]": "[bad" is not a valid pattern`}},
		{"unset variable", `{"mcpServers": {"a": {"command": "x", "env": {"T": "${TOKEN}"}}}}`, []string{`backend "a": key "env.T": ${TOKEN} is not set`}},
		{"unset in args", `{"mcpServers": {"a": {"command": "x", "args": ["${NOPE}"]}}}`, []string{`backend "a": key "args[0]": ${NOPE} is not set`}},
		{"bad variable", `{"mcpServers": {"a": {"command": "${HOME"}}}`, []string{`backend "a": key "command": "${HOME": unterminated ${`}},
		{"many at once", `{"mcpServers": {"a": {"command": 1}, "b": {"command": "x", "timeout": "x"}}}`, []string{`backend "a": key "command"`, `backend "b": key "timeout"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.file), env(map[string]string{"HOME": "/h"}))
			if err == nil {
				t.Fatalf("no error; config %+v", cfg)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("not a *ConfigError: %T %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gw.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"a": {}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(file)
	if err == nil || !strings.HasPrefix(err.Error(), file+": ") || !strings.Contains(err.Error(), `backend "a": key "command": missing`) {
		t.Fatalf("error %v", err)
	}
	if _, err := LoadConfig(file + ".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestStripJSONCKeepsStringsAndOffsets(t *testing.T) {
	in := "{\"a\": \"// not a comment, /* nor this */\", // gone\n \"b\": [1, 2,], /* x\n y */ \"c\": \"\\\"//\",}"
	out := string(stripJSONC([]byte(in)))
	if len(out) != len(in) || strings.Count(out, "\n") != strings.Count(in, "\n") {
		t.Fatalf("length or lines changed:\n%s", out)
	}
	for _, keep := range []string{`"// not a comment, /* nor this */"`, `"\"//"`} {
		if !strings.Contains(out, keep) {
			t.Errorf("string %s was changed:\n%s", keep, out)
		}
	}
	if strings.Contains(out, "gone") || strings.Contains(out, " y ") || strings.Contains(out, "2,]") || strings.Contains(out, ",}") {
		t.Errorf("comments or trailing commas left:\n%s", out)
	}
}

// The warnings come with the errors: a misspelt key is often why another
// is missing.
func TestParseConfigWarnsAlongErrors(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {"a": {"comand": "npx"}}}`), nil)
	if err == nil || !strings.Contains(err.Error(), `backend "a": key "command": missing`) {
		t.Fatalf("error %v", err)
	}
	if cfg == nil || !slices.Equal(cfg.Warnings, []string{`config: backend "a": key "comand" ignored`}) || len(cfg.Backends) != 0 {
		t.Fatalf("config with the error: %+v", cfg)
	}
}

// TestLoadEnvFiles: "envFile" (VS Code's key) adds a dotenv file's
// variables to the backend's environment, below its "env"; a relative
// path is the configuration file's folder's; a file that is missing or
// malformed is an error naming the backend and the key.
func TestLoadEnvFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".env", "# comment\n\nexport TOKEN=abc\nPLAIN = two words # a comment\r\nQUOTED=\"a \\\"b\\\"\\n#c\" # after\nSINGLE='x\\n # y'\nEMPTY=\nLEVEL=debug\n")
	write("bad.env", "OK=1\nnot a variable\n")
	write("gw.json", `{"mcpServers": {
		"one": {"command": "x", "envFile": ".env", "env": {"LEVEL": "warn"}},
		"two": {"command": "x"}
	}}`)
	cfg, err := LoadConfig(filepath.Join(dir, "gw.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TOKEN=abc", "PLAIN=two words", "QUOTED=a \"b\"\n#c", `SINGLE=x\n # y`, "EMPTY=", "LEVEL=debug", "LEVEL=warn"}
	if got := cfg.Backends[0].Env; !slices.Equal(got, want) {
		t.Errorf("env:\n got %q\nwant %q", got, want)
	}
	if cfg.Backends[1].Env != nil {
		t.Errorf("a backend without envFile got %q", cfg.Backends[1].Env)
	}

	for _, tc := range []struct{ file, want string }{
		{"missing.env", `backend "one": key "envFile": open ` + filepath.Join(dir, "missing.env")},
		{"bad.env", "bad.env: line 2: want KEY=value"},
	} {
		write("gw.json", `{"mcpServers": {"one": {"command": "x", "envFile": "`+tc.file+`"}}}`)
		_, err := LoadConfig(filepath.Join(dir, "gw.json"))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != "envFile" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a ConfigError on envFile saying %q", tc.file, err, tc.want)
		}
	}
	for _, bad := range []string{`A="open`, `A='open`, "=1", "A B=1"} {
		if _, err := parseEnvFile([]byte(bad)); err == nil {
			t.Errorf("parseEnvFile(%q): no error", bad)
		}
	}
}
