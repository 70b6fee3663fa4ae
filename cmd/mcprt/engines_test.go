package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// One engine per process (issue 34, item 1), checked two ways.

// TestEngineSites reads the module's source: actor.NewEngine is called
// only by runtime.Serve (once per call, for stdio or a transport) and by
// the fallbacks of pieces used alone (streamhttp.Serve without an Engine,
// taskrun.Start without one, a gateway launched outside a tree), and
// chaos's targets; and the serving verbs (serve, serve -http, gateway,
// gateway -http, with -tasks) call neither NewEngine nor any of those
// fallbacks: they hand everything to runtime.Serve, whose one engine is
// then the process's. What it proves is syntactic: a new call of a
// fallback, or of NewEngine, anywhere in those files fails it.
func TestEngineSites(t *testing.T) {
	root := filepath.Join("..", "..")
	want := []string{
		"runtime.Serve",               // stdio
		"runtime.serveTransport",      // HTTP, or Options.Transport
		"runtime/fault.startHTTPTree", // mcprt chaos -http's target
		"runtime/fault.startTree",     // mcprt chaos's target
		"runtime/gateway.launch",      // Start, without a tree
		"runtime/streamhttp.Serve",    // without ServeOptions.Engine
		"runtime/taskrun.Start",       // without an engine
	}
	var got []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || fileExists(filepath.Join(path, "go.mod"))) {
			return filepath.SkipDir // another module (test/e2e)
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel := selectorCall(n); sel == "actor.NewEngine" {
					got = append(got, filepath.ToSlash(rel)+"."+fn.Name.Name)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("actor.NewEngine is called in %q, want %q: a new engine in a serving path is a second tree's", got, want)
	}

	// The serving verbs reach no fallback.
	banned := []string{"actor.NewEngine", "streamhttp.Serve", "taskrun.Start", "runtime.StartTasks", "runtime.Start", ".Launch", ".Start"}
	for _, file := range []string{"serve.go", "servehttp.go", "gateway.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel := selectorCall(n)
			for _, b := range banned {
				if sel != "" && (sel == b || strings.HasPrefix(b, ".") && strings.HasSuffix(sel, b)) {
					t.Errorf("%s: %s calls %s, which makes an engine or a tree of its own: give it to runtime.Serve (Options.Parts, Tasks, Transport)", fset.Position(n.Pos()), file, sel)
				}
			}
			return true
		})
	}
}

// selectorCall is "x.Name" when n is a call of x.Name(…) with x an
// identifier, else "".
func selectorCall(n ast.Node) string {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if x, ok := sel.X.(*ast.Ident); ok {
		return x.Name + "." + sel.Sel.Name
	}
	return "." + sel.Sel.Name
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestOneEngineHTTPVerbs runs serve -http -tasks and gateway -http -tasks
// in this process and counts the engines made meanwhile, from the memory
// profile: with every allocation sampled, each actor.NewEngine is its
// Engine's allocation there. It proves the count at run time, all paths
// taken, for the verbs that can run in a test process (the stdio verbs
// claim the process's standard streams; TestEngineSites covers them). It
// signals this process (SIGTERM, caught by the verb), so it is not
// parallel.
func TestOneEngineHTTPVerbs(t *testing.T) {
	if goruntime.GOOS == "windows" {
		t.Skip("stopped with SIGTERM")
	}
	defer func(rate int) { goruntime.MemProfileRate = rate }(goruntime.MemProfileRate)
	goruntime.MemProfileRate = 1
	resample()
	// Calibrate: the allocations NewEngine itself makes for one engine.
	before := engineAllocs()
	for range 2 {
		if _, err := actor.NewEngine(actor.NewEngineConfig()); err != nil {
			t.Fatal(err)
		}
	}
	per := (engineAllocs() - before) / 2
	if per <= 0 {
		t.Fatalf("NewEngine's allocations are not seen in the memory profile (%d per engine)", per)
	}
	// A backend nobody serves: the gateway runs all the same, its
	// backend failing, which is all the count needs.
	config := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(config, []byte(`{"mcpServers":{"nowhere":{"url":"http://127.0.0.1:1/mcp"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"serve", "-http", "127.0.0.1:0", "-tasks"},
		{"gateway", "-config", config, "-http", "127.0.0.1:0", "-tasks"},
	} {
		t.Run(args[0], func(t *testing.T) {
			before := engineAllocs()
			stderr := &lockedBuffer{}
			code := make(chan int, 1)
			go func() { code <- run(args, streams{Stdout: &bytes.Buffer{}, Stderr: stderr}) }()
			deadline := time.After(time.Minute) // a hang, not a pace
			for !strings.Contains(stderr.String(), "serving Streamable HTTP on") {
				select {
				case c := <-code:
					t.Fatalf("%q exited %d before serving:\n%s", args, c, stderr)
				case <-deadline:
					t.Fatalf("%q did not serve:\n%s", args, stderr)
				case <-time.After(10 * time.Millisecond):
				}
			}
			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case c := <-code:
				if c != 0 {
					t.Errorf("%q: exit %d after SIGTERM:\n%s", args, c, stderr)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%q did not stop:\n%s", args, stderr)
			}
			if n := (engineAllocs() - before) / per; n != 1 {
				t.Errorf("%q made %d actor engines, want 1", args, n)
			}
		})
	}
}

// resample makes every P sample its next allocation at MemProfileRate:
// each had drawn its next sample point at the old rate (512 KiB on
// average), so each allocates well past that first.
func resample() {
	n := 4 * goruntime.GOMAXPROCS(0)
	kept := make([][][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for range 4096 {
				kept[i] = append(kept[i], make([]byte, 4096))
			}
		})
	}
	wg.Wait()
	goruntime.KeepAlive(kept)
}

// engineAllocs is how many objects actor.NewEngine itself has allocated
// in this process (while MemProfileRate was 1), as of now.
func engineAllocs() int64 {
	for range 3 { // the profile is published a cycle or two late
		goruntime.GC()
	}
	var recs []goruntime.MemProfileRecord
	n, _ := goruntime.MemProfile(nil, true)
	for {
		recs = make([]goruntime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = goruntime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	var total int64
	for _, r := range recs {
		// The first frame past the allocator's (runtime.mallocgc,
		// runtime.newobject) is where the allocation was written.
		frames := goruntime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if strings.HasPrefix(f.Function, "runtime.") && more {
				continue
			}
			if f.Function == "github.com/anthdm/hollywood/actor.NewEngine" {
				total += r.AllocObjects
			}
			break
		}
	}
	return total
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
