package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/runtime/gateway"
)

// configFlags are the client verbs' -config FILE and -server NAME: the
// server to run taken from an mcpServers file (as Claude Desktop, Cursor
// or VS Code write it, and as mcprt gateway reads it) rather than from
// the command line after --.
type configFlags struct {
	file, server *string
}

func addConfigFlags(fs *flag.FlagSet) configFlags {
	return configFlags{
		file:   fs.String("config", "", "run a server of this mcpServers `file` (as MCP clients and mcprt gateway read it) instead of CMD after --"),
		server: fs.String("server", "", "with -config, the `name` of the server to run (needed when the file has more than one)"),
	}
}

// apply returns the server command, environment and directory to use:
// those given, or, with -config, the file's server's, with -env added to
// its environment and -C, when given, in place of its cwd.
func (cf configFlags) apply(command, env []string, dir, endpoint string) ([]string, []string, string, error) {
	switch {
	case *cf.file == "" && *cf.server != "":
		return nil, nil, "", fmt.Errorf("-server needs -config FILE")
	case *cf.file == "":
		return command, env, dir, nil
	case len(command) > 0:
		return nil, nil, "", fmt.Errorf("-config and a server command after -- are two servers: give one")
	case endpoint != "":
		return nil, nil, "", fmt.Errorf("-config and -url are two servers: give one")
	}
	// Only the server used is checked: another's problem in the same
	// file (a missing "command", an unset variable) is not this one's.
	file := *cf.file
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, "", err
	}
	names, err := gateway.ConfigServerNames(data)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", file, err)
	}
	name := *cf.server
	switch {
	case name != "" && !slices.Contains(names, name):
		return nil, nil, "", fmt.Errorf("%s has no server %q (it has %s)", file, name, strings.Join(names, ", "))
	case name == "" && len(names) == 1:
		name = names[0]
	case name == "":
		return nil, nil, "", fmt.Errorf("%s has %d servers (%s): name one with -server, or run them all as one with -- mcprt gateway -config %s",
			file, len(names), strings.Join(names, ", "), file)
	}
	cfg, err := gateway.ParseConfigServer(data, name, os.LookupEnv)
	if err == nil {
		err = cfg.LoadEnvFiles(filepath.Dir(file))
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", file, err)
	}
	b := cfg.Backends[0]
	if b.URL != "" {
		return nil, nil, "", fmt.Errorf("%s: server %q is a remote one (\"url\"): give -url %s instead of -config", file, name, b.URL)
	}
	if dir == "" {
		dir = b.Dir
	}
	return append([]string{b.Command}, b.Args...), append(append([]string(nil), b.Env...), env...), dir, nil
}
