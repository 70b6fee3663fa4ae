package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/runtime/gateway"
)

// The gateway without -config serves the servers the user's MCP client
// already lists: the project's files first (Claude Code's .mcp.json, VS
// Code's .vscode/mcp.json), then the user's (Cursor, Claude Desktop).

// configCandidate is a file gateway looks for, and who writes it.
type configCandidate struct {
	path, who string
}

// configCandidates are the files gateway looks for without -config, in
// order. A folder the OS does not give (no home) leaves its files out.
func configCandidates() []configCandidate {
	// "./" shown, so that the messages say these are looked for here.
	here := "." + string(filepath.Separator)
	c := []configCandidate{
		{here + ".mcp.json", "the project's, as Claude Code writes it"},
		{here + filepath.Join(".vscode", "mcp.json"), "the project's, as VS Code writes it"},
	}
	if home, err := os.UserHomeDir(); err == nil {
		c = append(c, configCandidate{filepath.Join(home, ".cursor", "mcp.json"), "Cursor's"})
	}
	// Claude Desktop keeps its file in the OS's folder for settings:
	// ~/.config (or $XDG_CONFIG_HOME) on Linux, ~/Library/Application
	// Support on macOS, %APPDATA% on Windows, which is what
	// os.UserConfigDir gives.
	if dir, err := os.UserConfigDir(); err == nil {
		c = append(c, configCandidate{filepath.Join(dir, "Claude", "claude_desktop_config.json"), "Claude Desktop's"})
	}
	return c
}

// findConfig is the first of the candidates that exists, or "" and the
// message that says where gateway looked, with an example to start from.
func findConfig() (file, who, notFound string) {
	cands := configCandidates()
	for _, c := range cands {
		if st, err := os.Stat(c.path); err == nil && !st.IsDir() {
			return c.path, c.who, ""
		}
	}
	var b strings.Builder
	b.WriteString("no -config FILE, and none of the MCP client configurations it looks for exists:\n")
	for _, c := range cands {
		fmt.Fprintf(&b, "  %s  (%s)\n", c.path, c.who)
	}
	b.WriteString("Give -config FILE, or write ./.mcp.json, for example:\n")
	b.WriteString(`  {"mcpServers": {"ref": {"command": "mcprt", "args": ["serve"]},` + "\n")
	b.WriteString(`                  "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}}}`)
	return "", "", b.String()
}

// runsGateway reports whether b starts this gateway again on the same
// file: a command that is mcprt (by name, or the running executable)
// whose first argument is gateway, with no -config or with -config file.
// Users list the gateway in the very file it reads (Claude Desktop's, say):
// serving that entry would start a gateway that starts a gateway, without
// end.
func runsGateway(b gateway.Backend, file string) bool {
	if b.Command == "" || len(b.Args) == 0 || b.Args[0] != "gateway" || !isMcprt(b.Command) {
		return false
	}
	cfg, ok := configArg(b.Args[1:])
	if !ok {
		return true // it looks for its file itself, and finds this one
	}
	if !filepath.IsAbs(cfg) && b.Dir != "" {
		cfg = filepath.Join(b.Dir, cfg)
	}
	return samePath(cfg, file)
}

// isMcprt reports whether command starts mcprt: its name (mcprt,
// mcprt.exe), or a path to the running executable.
func isMcprt(command string) bool {
	name := strings.TrimSuffix(strings.ToLower(filepath.Base(command)), ".exe")
	if name == "mcprt" {
		return true
	}
	self, err := os.Executable()
	return err == nil && samePath(command, self)
}

// configArg is the value of -config (or --config) in args.
func configArg(args []string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, f := range []string{"-config", "--config"} {
			if v, ok := strings.CutPrefix(a, f+"="); ok {
				return v, true
			}
			if a == f && i+1 < len(args) {
				return args[i+1], true
			}
		}
	}
	return "", false
}

// samePath reports whether a and b name the same file, following links.
func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

// dropSelf removes from cfg the backends that would run this gateway
// again on file, saying so on stderr for each.
func dropSelf(cfg *gateway.Config, file string, warn func(string)) {
	cfg.Backends = slices.DeleteFunc(cfg.Backends, func(b gateway.Backend) bool {
		if !runsGateway(b, file) {
			return false
		}
		warn(fmt.Sprintf("server %q is this gateway (%s %s): left out, or it would start itself without end", b.Name, b.Command, strings.Join(b.Args, " ")))
		return true
	})
}
