package main

import (
	"errors"
	"flag"
	"fmt"
	goruntime "runtime"
	"runtime/debug"

	"github.com/mcprt/mcprt/runtime"
)

const versionUsage = `Usage: mcprt version

Prints mcprt's version, the Go version it was built with, and the platform:

	mcprt v0.1.0 (go1.26.0, linux/amd64)

The version is the one a release build stamped (go build -ldflags
"-X main.version=v0.1.0"), or else the module's, as go install recorded
it: a release tag for go install github.com/mcprt/mcprt/cmd/mcprt@latest,
or a pseudo-version for a build from a clone. A build that recorded none
says (devel), followed by the commit it was built from and +dirty for
uncommitted changes, when the build recorded those. The servers mcprt
runs (serve, gateway) give the same version in their serverInfo, and its
client verbs in their clientInfo. Also: mcprt --version.
`

// version is mcprt's version, the one place every other says it from:
// mcprt version, the serverInfo of serve and gateway, the clientInfo of
// the client verbs, the metrics. A release build stamps it with
// -ldflags "-X main.version=v0.1.0"; otherwise init fills it in from the
// build information the go command recorded.
var version string

func init() {
	if version == "" {
		version = recordedVersion()
	}
}

func init() {
	register(verb{name: "version", summary: "print mcprt's version (also: mcprt --version)", run: versionVerb})
}

func versionVerb(args []string, s streams) int {
	fs := flags("version", versionUsage, s)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.Stderr, "mcprt version: unexpected argument %q\n", fs.Arg(0))
		return runtime.ExitUsage
	}
	fmt.Fprintln(s.Stdout, versionLine())
	return runtime.ExitOK
}

// versionLine is what mcprt version prints, from the build information
// the go command embedded in the binary.
func versionLine() string {
	v, goVersion := buildVersions()
	return fmt.Sprintf("mcprt %s (%s, %s/%s)", v, goVersion, goruntime.GOOS, goruntime.GOARCH)
}

// buildVersions are mcprt's version and the Go version it was built with.
func buildVersions() (v, goVersion string) {
	goVersion = goruntime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	return version, goVersion
}

// recordedVersion is the module version the go command recorded in the
// binary, or (devel) with the commit when it recorded none.
func recordedVersion() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		if v == "(devel)" {
			v += buildRevision(bi.Settings)
		}
	}
	return v
}

// buildRevision is " <commit>" (12 digits) and "+dirty" when the build
// recorded its commit and uncommitted changes, or "".
func buildRevision(settings []debug.BuildSetting) string {
	var rev, dirty string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return " " + rev[:min(len(rev), 12)] + dirty
}
