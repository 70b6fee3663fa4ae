package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/runtime/gateway"
)

// TestReadmeGoBlocksCompile compiles every ```go block of README.md, so the
// code a user copies from it builds against this version of mcprt. Each
// block is a whole file (package clause included) and gofmt-clean. A block
// whose package name ends in _test is compiled as a test; any other is
// built, as a program (package main) or a library. Nothing is written into
// the repository: the blocks reach the go command as an overlay of files in
// directories that do not exist, under this module, so they build with its
// go.mod, and offline once its requirements are in the module cache.
func TestReadmeGoBlocksCompile(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(readme)
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go block: the extraction is broken, or the Embedding section lost its code")
	}

	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs, tests []string
	for i, b := range blocks {
		if formatted, err := format.Source([]byte(b.code)); err != nil {
			t.Errorf("README.md:%d: the go block does not parse: %v", b.line, err)
			continue
		} else if string(formatted) != b.code {
			t.Errorf("README.md:%d: the go block is not gofmt-clean", b.line)
		}
		f, err := parser.ParseFile(token.NewFileSet(), "", b.code, parser.PackageClauseOnly)
		if err != nil {
			t.Errorf("README.md:%d: no package clause (every go block must be a whole file): %v", b.line, err)
			continue
		}
		pkg := "./" + filepath.ToSlash(filepath.Join("test", "e2e", "_readme", "block"+strconv.Itoa(i+1)))
		name := "readme.go"
		if strings.HasSuffix(f.Name.Name, "_test") {
			name = "readme_test.go"
			tests = append(tests, pkg)
		} else {
			pkgs = append(pkgs, pkg)
		}
		src := filepath.Join(tmp, "block"+strconv.Itoa(i+1)+".go")
		if err := os.WriteFile(src, []byte(b.code), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(root, filepath.FromSlash(pkg), name)] = src
		t.Logf("README.md:%d: package %s as %s", b.line, f.Name.Name, pkg)
	}
	if t.Failed() {
		return
	}
	js, _ := json.Marshal(map[string]any{"Replace": overlay})
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, js, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "bin") + string(filepath.Separator)
	goRun := func(args ...string) {
		cmd := exec.Command(goCommand(t), args...)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			// The compiler names the temporary files: point at README.md.
			msg := string(b)
			for i, b := range blocks {
				file := regexp.QuoteMeta(filepath.Join(tmp, "block"+strconv.Itoa(i+1)+".go"))
				msg = regexp.MustCompile(file+`:(\d+)`).ReplaceAllStringFunc(msg, func(m string) string {
					n, _ := strconv.Atoi(m[strings.LastIndexByte(m, ':')+1:])
					return "README.md:" + strconv.Itoa(b.line+n)
				})
			}
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
	}
	// vet cannot take an overlay of files in directories that do not
	// exist, so the test binaries are compiled without it.
	if len(pkgs) > 0 {
		goRun(append([]string{"build", "-overlay", overlayFile, "-o", out}, pkgs...)...)
	}
	if len(tests) > 0 {
		goRun(append([]string{"test", "-vet=off", "-overlay", overlayFile, "-c", "-o", out}, tests...)...)
	}
}

type goBlock struct {
	line int // of the opening fence
	code string
}

// goBlocks returns the ```go fenced blocks of a Markdown text.
func goBlocks(md []byte) []goBlock {
	var blocks []goBlock
	var cur *goBlock
	var code strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &goBlock{line: n}
			code.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = code.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			code.WriteString(line)
			code.WriteByte('\n')
		}
	}
	return blocks
}

// goCommand finds the go command as build does: on PATH, which `go test`
// puts GOROOT/bin first on, else in GOROOT.
func goCommand(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if goroot := os.Getenv("GOROOT"); goroot != "" {
		return filepath.Join(goroot, "bin", "go")
	}
	t.Skip("no go command on PATH and GOROOT unset")
	return ""
}

// TestReadmeServersJSONRunsAsPasted: the README's first servers.json, the
// one a newcomer pastes, is a gateway configuration that needs nothing
// from the environment (a ${VAR} in it once made the first try fail).
func TestReadmeServersJSONRunsAsPasted(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "\n```json\n")
	block, _, closed := strings.Cut(rest, "\n```")
	if !ok || !closed {
		t.Fatal("README.md has no ```json block")
	}
	noEnv := func(name string) (string, bool) { return "", false }
	cfg, err := gateway.ParseConfig([]byte(block), noEnv)
	if err != nil {
		t.Fatalf("the README's first servers.json does not load as pasted: %v\n%s", err, block)
	}
	if len(cfg.Backends) == 0 {
		t.Fatalf("the README's first servers.json lists no server:\n%s", block)
	}
}

// TestReadmeConfigsLoad: every servers.json the README shows loads (its
// ${VAR}s given values), so that none of its examples is refused.
func TestReadmeConfigsLoad(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rest, n := string(readme), 0
	for {
		var ok bool
		if _, rest, ok = strings.Cut(rest, "\n```json\n"); !ok {
			break
		}
		var block string
		block, rest, _ = strings.Cut(rest, "\n```")
		n++
		env := func(name string) (string, bool) { return "value-of-" + name, true }
		if _, err := gateway.ParseConfig([]byte(block), env); err != nil {
			t.Errorf("the README's servers.json number %d does not load: %v\n%s", n, err, block)
		}
	}
	if n == 0 {
		t.Fatal("README.md has no ```json block")
	}
}
