package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/mcprt/mcprt/runtime"
)

const guardUsage = `Usage: mcprt guard -- CMD [ARGS...]

Runs CMD, an MCP server, with its stdin, stdout and stderr, in a process
group of its own, and makes sure nothing of it outlives the program that
started the guard: when that parent dies, even by SIGKILL, the guard kills
the whole group (CMD, and whatever CMD started: npx's node, a shell
script's children). A server that exits at stdin EOF needs none of this; a
wrapper whose child ignores EOF does.

SIGTERM, SIGINT and SIGHUP sent to the guard are passed on to CMD. The
guard exits as CMD did: its status, or killed by the same signal. It
writes nothing to stdout (CMD's protocol) and reads nothing from stdin.

mcprt gateway runs each stdio backend through it on Linux, and on macOS
and the BSDs, where it notices its parent's death within a second. Any
other MCP client can: "command": "mcprt", "args": ["guard", "--", ...].
`

func init() {
	register(verb{name: "guard", summary: "run a server whose whole process group dies with its parent", run: guardVerb})
}

func guardVerb(args []string, s streams) int {
	fs := flags("guard", guardUsage, s)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprint(s.Stderr, "mcprt guard: no command (mcprt guard -- CMD [ARGS...])\n")
		return runtime.ExitUsage
	}
	return guard(fs.Args(), s)
}
