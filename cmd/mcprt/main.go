// Command mcprt runs the mcprt reference MCP server over stdio, and drives
// other MCP servers: as a client, a fault injector and a load generator.
//
//	mcprt serve [flags]             run the reference server on stdin/stdout
//	mcprt VERB [flags] -- CMD ARGS  drive another server (see mcprt help)
//	mcprt help [verb]               explain a verb
//
// Exit statuses: 0 after stdin EOF, SIGINT/SIGTERM or a client that closed
// stdout; 1 when the server failed (its supervisor gave up) or a verb found
// a failure; 2 for a bad command line.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/runtime"
)

// A verb is one sub-command. Each lives in its own file and registers
// itself in init, so verbs can be added without touching this one.
type verb struct {
	name    string
	summary string // one line for `mcprt help`
	// run gets the arguments after the verb and returns the exit status.
	// It must answer -h/--help with its own usage and ExitOK.
	run func(args []string, stderr io.Writer) int
}

var verbs []verb

func register(v verb) { verbs = append(verbs, v) }

const intro = `mcprt — a supervised actor runtime for MCP servers over stdio.

Usage:
`

const outro = `
The reference server speaks every MCP revision in use: the initialize-era
revisions 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25, and the
stateless 2026-07-28 (server/discover, per-request _meta).

Exit status: 0 after stdin EOF, SIGINT/SIGTERM or a client that closed
stdout; 1 when the server failed or a verb found a failure; 2 for a bad
command line.
`

func usage() string {
	var b strings.Builder
	b.WriteString(intro)
	vs := slices.Clone(verbs)
	slices.SortFunc(vs, func(a, b verb) int { return strings.Compare(a.name, b.name) })
	for _, v := range vs {
		fmt.Fprintf(&b, "  mcprt %-8s %s\n", v.name, v.summary)
	}
	fmt.Fprintf(&b, "  mcprt %-8s %s\n", "help", "show help for a verb (also: mcprt VERB --help)")
	b.WriteString(outro)
	return b.String()
}

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return runtime.ExitUsage
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		if len(args) > 1 {
			if v, ok := lookup(args[1]); ok {
				return v.run([]string{"-help"}, stderr)
			}
		}
		fmt.Fprint(stderr, usage())
		return runtime.ExitOK
	}
	if v, ok := lookup(name); ok {
		return v.run(args[1:], stderr)
	}
	fmt.Fprintf(stderr, "mcprt: unknown verb %q\n\n%s", name, usage())
	return runtime.ExitUsage
}

// flags returns a verb's flag set: errors and usage go to stderr, usage is
// the verb's text followed by its flags.
func flags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

func lookup(name string) (verb, bool) {
	i := slices.IndexFunc(verbs, func(v verb) bool { return v.name == name })
	if i < 0 {
		return verb{}, false
	}
	return verbs[i], true
}
