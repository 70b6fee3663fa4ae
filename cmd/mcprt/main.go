// Command mcprt runs the mcprt reference MCP server over stdio, and (in later
// verbs) drives other MCP servers.
//
//	mcprt serve [flags]     run the reference server on stdin/stdout
//	mcprt help [verb]       explain a verb
//
// Exit statuses: 0 after stdin EOF, SIGINT/SIGTERM or a client that closed
// stdout; 1 when the server failed (its supervisor gave up); 2 for a bad
// command line.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/mcprt/mcprt/runtime"
)

const usage = `mcprt — a supervised actor runtime for MCP servers over stdio.

Usage:
  mcprt serve [flags]    run the reference MCP server on stdin/stdout
  mcprt help [verb]      show help for a verb (also: mcprt VERB --help)

The reference server speaks every MCP revision in use: the initialize-era
revisions 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25, and the
stateless 2026-07-28 (server/discover, per-request _meta).

Exit status: 0 after stdin EOF, SIGINT/SIGTERM or a client that closed
stdout; 1 when the server failed; 2 for a bad command line.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return runtime.ExitUsage
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] == "serve" {
			return serve([]string{"-help"}, stderr)
		}
		fmt.Fprint(stderr, usage)
		return runtime.ExitOK
	}
	fmt.Fprintf(stderr, "mcprt: unknown verb %q\n\n%s", args[0], usage)
	return runtime.ExitUsage
}
