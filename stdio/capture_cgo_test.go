//go:build unix

package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCaptureCgo builds testdata/capture_cgo, whose C code prints through C
// stdio (printf + fflush) while fd 1 is captured. Go refuses cgo in _test.go
// files, hence a separate program; it is skipped where cgo is unavailable.
func TestCaptureCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a cgo program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	env := func(name string) string {
		out, err := exec.Command(goTool, "env", name).Output()
		if err != nil {
			t.Skipf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	if env("CGO_ENABLED") != "1" {
		t.Skip("cgo disabled")
	}
	if cc := strings.Fields(env("CC")); len(cc) == 0 {
		t.Skip("no C compiler configured")
	} else if _, err := exec.LookPath(cc[0]); err != nil {
		t.Skipf("no C compiler: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "capture_cgo")
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./testdata/capture_cgo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	run := exec.CommandContext(ctx, bin)
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}

	// What C printed after Stop reached the real stdout, before the report.
	first, report, ok := strings.Cut(stdout.String(), "\n")
	if !ok || first != "c after stop" {
		t.Fatalf("stdout is %q, want C's post-Stop line first", stdout.String())
	}
	var got []struct {
		Data    string `json:"data"`
		Partial bool   `json:"partial"`
	}
	if err := json.Unmarshal([]byte(report), &got); err != nil {
		t.Fatalf("report %q: %v", report, err)
	}
	if len(got) != 1001 {
		t.Fatalf("%d deliveries, want 1001", len(got))
	}
	for i := range 1000 {
		if got[i].Data != fmt.Sprintf("c line %d", i) || got[i].Partial {
			t.Fatalf("delivery %d is %+v", i, got[i])
		}
	}
	if got[1000].Data != "c unfinished" {
		t.Fatalf("last delivery is %+v", got[1000])
	}
	if strings.TrimSpace(stderr.String()) != "" {
		t.Fatalf("stderr: %s", stderr.String())
	}
}
