package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/fixture"
	"github.com/mcprt/mcprt/runtime"
)

// mcprt serve --help lists what the reference server registered: every
// tool, resource, template and prompt, as fixture.Catalog lists them (the
// fixture's tests check that the catalog is the registry).
func TestServeHelpListsTheRegistry(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"serve", "--help"}, streams{Stdout: &stdout, Stderr: &stderr})
	if code != runtime.ExitOK || stderr.Len() != 0 {
		t.Fatalf("serve --help: exit %d, stderr %q", code, stderr.String())
	}
	catalog, err := fixture.Catalog(fixture.Reference(version))
	if err != nil || !strings.Contains(catalog, "Tools:\n  echo {text}") {
		t.Fatalf("the reference server's catalog: %v\n%s", err, catalog)
	}
	if !strings.Contains(stdout.String(), catalog) {
		t.Errorf("serve --help does not list the catalog:\n%s\nwant within it:\n%s", stdout.String(), catalog)
	}
}
