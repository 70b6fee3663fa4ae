// Command mcprt runs the mcprt reference MCP server over stdio, and drives
// other MCP servers: as a client, a fault injector and a load generator.
//
//	mcprt serve [flags]             run the reference server on stdin/stdout
//	mcprt VERB [flags] -- CMD ARGS  drive another server (see mcprt help)
//	mcprt help [verb]               explain a verb
//	mcprt version                   print mcprt's version (also --version)
//
// Exit statuses: 0 after stdin EOF, SIGINT/SIGTERM or a client that closed
// stdout; 1 when the server failed (its supervisor gave up) or a verb found
// a failure; 2 for a bad command line.
//
// The command is the top of mcprt's package stack, cmd → runtime → session
// → handlers (test/layers writes it out whole and checks it).
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
	// It must answer -h/--help with its own usage on stdout and ExitOK
	// (flags does that for a verb whose flag set it makes).
	run func(args []string, s streams) int
}

// streams are where a verb writes: help that was asked for and results go
// to Stdout; diagnostics, progress and unasked usage to Stderr. Nothing
// may write to Stdout once `mcprt serve` serves: it is the protocol.
type streams struct {
	Stdout, Stderr io.Writer
}

var verbs []verb

func register(v verb) { verbs = append(verbs, v) }

const intro = `mcprt — a supervised actor runtime for MCP servers over stdio and Streamable HTTP.

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
	os.Exit(run(os.Args[1:], streams{Stdout: os.Stdout, Stderr: os.Stderr}))
}

// run is mcprt with its arguments. Help that was asked for (mcprt --help,
// mcprt help [VERB], mcprt VERB --help) goes to stdout with status 0;
// usage nobody asked for (no verb, an unknown one, a bad flag) goes to
// stderr with status 2.
func run(args []string, s streams) int {
	if len(args) == 0 {
		fmt.Fprint(s.Stderr, usage())
		return runtime.ExitUsage
	}
	name := args[0]
	if name == "-version" || name == "--version" {
		name = "version"
	}
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		switch {
		case len(args) == 1:
			fmt.Fprint(s.Stdout, usage())
			return runtime.ExitOK
		case len(args) > 2:
			fmt.Fprintf(s.Stderr, "mcprt: help takes one verb, not %q\n", args[1:])
			return runtime.ExitUsage
		}
		if v, ok := lookup(args[1]); ok {
			return v.run([]string{"-help"}, s)
		}
		if args[1] == "help" {
			fmt.Fprint(s.Stdout, usage())
			return runtime.ExitOK
		}
		fmt.Fprintf(s.Stderr, "mcprt: no help for %q: it is not a verb (mcprt help lists them)\n", args[1])
		return runtime.ExitUsage
	}
	if v, ok := lookup(name); ok {
		return v.run(args[1:], s)
	}
	fmt.Fprintf(s.Stderr, "mcprt: unknown verb %q\n\n%s", name, usage())
	return runtime.ExitUsage
}

// flags returns a verb's flag set, whose usage is the verb's text followed
// by its flags. Asked for (-h, -help, --help: Parse returns flag.ErrHelp),
// the usage goes to s.Stdout; after a bad flag, the error and the usage go
// to s.Stderr.
func flags(name, usage string, s streams) *flag.FlagSet {
	return flagsFunc(name, func() string { return usage }, s)
}

// flagsFunc is flags with a usage text made only when it is printed.
func flagsFunc(name string, usage func() string, s streams) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	errs := &flagErrors{w: s.Stderr}
	fs.SetOutput(errs)
	fs.Usage = func() {
		// The flag package prints a parse error to the output just before
		// it calls Usage; for -h/-help it calls Usage alone.
		w := s.Stdout
		if errs.wrote {
			w = s.Stderr
		}
		errs.wrote = false
		fmt.Fprint(w, usage())
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(errs)
	}
	return fs
}

// flagErrors is a flag set's output: stderr, noting whether an error was
// printed since the last usage.
type flagErrors struct {
	w     io.Writer
	wrote bool
}

func (f *flagErrors) Write(p []byte) (int, error) {
	f.wrote = true
	return f.w.Write(p)
}

func lookup(name string) (verb, bool) {
	i := slices.IndexFunc(verbs, func(v verb) bool { return v.name == name })
	if i < 0 {
		return verb{}, false
	}
	return verbs[i], true
}
