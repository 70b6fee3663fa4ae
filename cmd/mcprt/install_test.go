package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
)

// installHang only turns a hang into a failure; nothing asserts on time.
const installHang = 5 * time.Minute

// goCommand finds the go command: go test puts GOROOT/bin first on PATH.
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if goroot := os.Getenv("GOROOT"); goroot != "" {
		return filepath.Join(goroot, "bin", "go")
	}
	t.Fatal("no go command")
	return ""
}

// runInstalled runs bin with args and returns its stdout, stderr and exit
// status.
func runInstalled(t *testing.T, ctx context.Context, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestInstallFromClone runs the README's install line for a clone,
// GOBIN=$(mktemp -d) go install ./cmd/mcprt from the repository's root, and
// then the installed mcprt: its version is the one the go command recorded
// in the binary (go version -m), and its help is on stdout.
func TestInstallFromClone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), installHang)
	defer cancel()
	goBin := goCommand(t)
	gomod, err := exec.CommandContext(ctx, goBin, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))

	gobin := t.TempDir()
	install := exec.CommandContext(ctx, goBin, "install", "./cmd/mcprt")
	install.Dir = root
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/mcprt: %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "mcprt")
	if goruntime.GOOS == "windows" {
		bin += ".exe"
	}

	// What the go command recorded: the first line is "PATH: goVERSION",
	// then "\tmod\tMODULE\tVERSION..." and "\tbuild\tKEY=VALUE" lines.
	meta, err := exec.CommandContext(ctx, goBin, "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	lines := strings.Split(string(meta), "\n")
	_, goVersion, _ := strings.Cut(lines[0], ": ")
	var modVersion, rev, dirty string
	for _, l := range lines[1:] {
		f := strings.Split(strings.TrimPrefix(l, "\t"), "\t")
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/mcprt/mcprt":
			modVersion = f[2]
		case len(f) >= 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			rev = strings.TrimPrefix(f[1], "vcs.revision=")
		case len(f) >= 2 && f[0] == "build" && f[1] == "vcs.modified=true":
			dirty = "+dirty"
		}
	}
	if modVersion == "" || goVersion == "" {
		t.Fatalf("go version -m %s: no module version or go version:\n%s", bin, meta)
	}
	want := modVersion
	if want == "(devel)" && rev != "" {
		want += " " + rev[:min(len(rev), 12)] + dirty
	}
	wantLine := fmt.Sprintf("mcprt %s (%s, %s/%s)\n", want, goVersion, goruntime.GOOS, goruntime.GOARCH)

	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		out, errs, code := runInstalled(t, ctx, bin, args...)
		if code != 0 || out != wantLine || errs != "" {
			t.Errorf("mcprt %s: exit %d, stdout %q, stderr %q; want 0 and %q", args[0], code, out, errs, wantLine)
		}
	}
	// Asked-for help on stdout; unasked usage on stderr, status 2.
	out, errs, code := runInstalled(t, ctx, bin, "--help")
	if code != 0 || !strings.Contains(out, "mcprt version") || errs != "" {
		t.Errorf("mcprt --help: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, errs, code = runInstalled(t, ctx, bin, "serve", "-h")
	if code != 0 || !strings.Contains(out, "Usage: mcprt serve") || errs != "" {
		t.Errorf("mcprt serve -h: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, errs, code = runInstalled(t, ctx, bin)
	if code != 2 || out != "" || !strings.Contains(errs, "Usage:") {
		t.Errorf("mcprt: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, errs, code = runInstalled(t, ctx, bin, "help", "nosuch")
	if code != 2 || out != "" || !strings.Contains(errs, "nosuch") {
		t.Errorf("mcprt help nosuch: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
