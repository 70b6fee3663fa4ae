package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/runtime"
)

// runMcprt runs mcprt in process with args and returns its stdout, stderr
// and exit status.
func runMcprt(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, streams{Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), code
}

// Help that was asked for goes to stdout with status 0, for mcprt itself
// and for every verb registered.
func TestHelpAskedForGoesToStdout(t *testing.T) {
	top := []string{"mcprt — ", "Usage:", "mcprt help"}
	for _, v := range verbs {
		top = append(top, "mcprt "+v.name+" ")
	}
	check := func(args []string, want []string) {
		t.Helper()
		out, errs, code := runMcprt(args...)
		if code != runtime.ExitOK || errs != "" {
			t.Errorf("mcprt %s: exit %d, stderr %q; want 0 and nothing on stderr", strings.Join(args, " "), code, errs)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("mcprt %s: stdout lacks %q:\n%s", strings.Join(args, " "), w, out)
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"-help"}, {"-h"}, {"help"}, {"help", "help"}} {
		check(args, top)
	}
	if len(verbs) < 9 {
		t.Fatalf("only %d verbs registered", len(verbs))
	}
	for _, v := range verbs {
		want := []string{"Usage: mcprt " + v.name}
		check([]string{"help", v.name}, want)
		check([]string{v.name, "--help"}, want)
		check([]string{v.name, "-h"}, want)
	}
}

// Usage nobody asked for, and help for what is not a verb, go to stderr
// with status 2.
func TestUsageNotAskedForGoesToStderr(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "Usage:"},
		{[]string{"nosuch"}, `unknown verb "nosuch"`},
		{[]string{"--nosuch"}, `unknown verb "--nosuch"`},
		{[]string{"help", "nosuch"}, `"nosuch": it is not a verb`},
		{[]string{"help", "serve", "list"}, "help takes one verb"},
		{[]string{"serve", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"serve", "-bogus"}, "Usage: mcprt serve"},
		{[]string{"chaos", "-bogus"}, "Usage: mcprt chaos"},
		{[]string{"version", "-bogus"}, "Usage: mcprt version"},
		{[]string{"version", "extra"}, `unexpected argument "extra"`},
		{[]string{"--version", "extra"}, `unexpected argument "extra"`},
	} {
		out, errs, code := runMcprt(tc.args...)
		if code != runtime.ExitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("mcprt %s: exit %d, stdout %q, stderr %q; want 2, nothing on stdout and %q on stderr",
				strings.Join(tc.args, " "), code, out, errs, tc.want)
		}
	}
}

// After a bad flag (usage to stderr), the same flag set still answers -h
// on stdout: the choice is made per call of the usage.
func TestFlagsUsageChoosesItsStreamEachTime(t *testing.T) {
	var out, errb bytes.Buffer
	fs := flags("x", "Usage: x\n", streams{Stdout: &out, Stderr: &errb})
	fs.Bool("b", false, "a flag")
	if err := fs.Parse([]string{"-nope"}); err == nil {
		t.Fatal("a bad flag parsed")
	}
	if out.Len() != 0 || !strings.Contains(errb.String(), "Usage: x") || !strings.Contains(errb.String(), "-b\t") {
		t.Fatalf("bad flag: stdout %q, stderr %q", out.String(), errb.String())
	}
	errb.Reset()
	if err := fs.Parse([]string{"-h"}); err == nil {
		t.Fatal("-h parsed")
	}
	if errb.Len() != 0 || !strings.Contains(out.String(), "Usage: x") || !strings.Contains(out.String(), "-b\t") {
		t.Fatalf("-h: stdout %q, stderr %q", out.String(), errb.String())
	}
}

func TestVersionLine(t *testing.T) {
	out, errs, code := runMcprt("version")
	if code != runtime.ExitOK || errs != "" || out != versionLine()+"\n" || !strings.HasPrefix(out, "mcprt ") {
		t.Errorf("mcprt version: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, flag := range []string{"--version", "-version"} {
		if o, e, c := runMcprt(flag); c != code || o != out || e != errs {
			t.Errorf("mcprt %s: exit %d, stdout %q, stderr %q; want what mcprt version printed", flag, c, o, e)
		}
	}
}
