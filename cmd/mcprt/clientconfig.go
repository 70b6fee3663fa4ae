package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/handlers/gateway"
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
	cfg, err := gateway.LoadConfig(*cf.file)
	if err != nil {
		return nil, nil, "", err
	}
	var names []string
	for _, b := range cfg.Backends {
		names = append(names, b.Name)
		if b.Name != *cf.server && (*cf.server != "" || len(cfg.Backends) > 1) {
			continue
		}
		if dir == "" {
			dir = b.Dir
		}
		return append([]string{b.Command}, b.Args...), append(append([]string(nil), b.Env...), env...), dir, nil
	}
	if *cf.server == "" {
		return nil, nil, "", fmt.Errorf("%s has %d servers (%s): name one with -server, or run them all as one with -- mcprt gateway -config %s",
			*cf.file, len(names), strings.Join(names, ", "), *cf.file)
	}
	return nil, nil, "", fmt.Errorf("%s has no server %q (it has %s)", *cf.file, *cf.server, strings.Join(names, ", "))
}
