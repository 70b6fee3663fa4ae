package layers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcprt/mcprt"

// stack is the package stack of doc.go, top floor first. A package belongs
// to the floor of its longest matching prefix (a prefix matches the path
// itself and everything under it).
var stack = [][]string{
	{"cmd"},
	{"test"},
	{"runtime", "runtime/gateway"},
	{"session", "session/client"},
	{"handlers"},
	{"handlers/mcp"},
	{"handlers/jsonschema", "handlers/uritemplate"},
	{"stdio"},
	{"stdio/wire"},
	{"supervisor"},
	{"handlers/jsonrpc"},
}

// floor returns the floor of a package of the module (its path relative to
// the module), or -1 when it has none.
func floor(pkg string) int {
	best, bestLen := -1, -1
	for i, prefixes := range stack {
		for _, p := range prefixes {
			if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

// arrowsAgainst returns, for a graph of the module's packages (relative
// paths) to their imports (full paths), every import that goes up the
// stack, and every package that has no floor.
func arrowsAgainst(graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		from := floor(pkg)
		if from < 0 {
			bad = append(bad, fmt.Sprintf("%s is on no floor of the stack: place it in test/layers (doc.go and stack)", pkg))
			continue
		}
		for _, imp := range imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue // the standard library or another module
			}
			if to := floor(rel); to < from {
				bad = append(bad, fmt.Sprintf("%s imports %s, which is above it in the stack", pkg, rel))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// goList runs go list in the module with the given GOOS and returns its
// output lines.
func goList(t *testing.T, goos string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s (GOOS=%s): %v\n%s", strings.Join(args, " "), goos, err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// The systems mcprt builds for: a file for one of them may import what the
// others' do not.
var systems = []string{"linux", "darwin", "windows"}

// TestStack: no package of the module imports one above it in the stack
// doc.go writes down, on any system mcprt builds for.
func TestStack(t *testing.T) {
	for _, goos := range systems {
		graph := map[string][]string{}
		for _, line := range goList(t, goos, "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			rel, ok := strings.CutPrefix(f[0], module+"/")
			if !ok {
				t.Fatalf("go list gave %q, not a package of %s", f[0], module)
			}
			graph[rel] = f[1:]
		}
		if _, ok := graph["handlers"]; !ok {
			t.Fatalf("GOOS=%s: go list did not list handlers: %d packages", goos, len(graph))
		}
		for _, a := range arrowsAgainst(graph) {
			t.Errorf("GOOS=%s: %s", goos, a)
		}
	}
}

// TestHandlersStartNoActors: handlers is what a server offers, as plain
// values and functions; running it is the session's. Neither it nor
// anything it imports links the actor library or the supervisor.
func TestHandlersStartNoActors(t *testing.T) {
	for _, goos := range systems {
		for _, dep := range goList(t, goos, "-deps", module+"/handlers") {
			if strings.HasPrefix(dep, "github.com/anthdm/hollywood") || dep == module+"/supervisor" {
				t.Errorf("GOOS=%s: handlers depends on %s", goos, dep)
			}
		}
	}
}

// TestArrowsAgainst: the rule itself, on graphs made up for it, so that a
// stack the test no longer checks cannot pass for a clean one.
func TestArrowsAgainst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  []string
	}{
		{"down and sideways", map[string][]string{
			"runtime":            {module + "/session", module + "/handlers", "fmt"},
			"runtime/streamhttp": {module + "/runtime", module + "/handlers/jsonrpc"},
			"runtime/gateway":    {module + "/session/client", module + "/supervisor"},
			"session/transport":  {module + "/session", module + "/stdio"},
		}, nil},
		{"up", map[string][]string{
			"handlers":         {module + "/session"},
			"handlers/jsonrpc": {module + "/handlers/jsonschema"},
			"supervisor":       {module + "/stdio"},
		}, []string{
			"handlers imports session, which is above it in the stack",
			"handlers/jsonrpc imports handlers/jsonschema, which is above it in the stack",
			"supervisor imports stdio, which is above it in the stack",
		}},
		{"a sub-package keeps its parent's floor unless it has its own", map[string][]string{
			"session/x":        {module + "/runtime"},
			"handlers/y":       {module + "/session"},
			"handlers/jsonrpc": {module + "/session"},
		}, []string{
			"handlers/jsonrpc imports session, which is above it in the stack",
			"handlers/y imports session, which is above it in the stack",
			"session/x imports runtime, which is above it in the stack",
		}},
		{"nowhere", map[string][]string{"transport": nil}, []string{
			"transport is on no floor of the stack: place it in test/layers (doc.go and stack)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := arrowsAgainst(tc.graph); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
