package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime"
)

// target is the server a campaign drives: a child process or a tree started
// in-process. Its methods other than the stream accessors are called by one
// goroutine, the campaign's.
type target interface {
	stdin() io.WriteCloser
	stdout() io.Reader
	// closeStdout closes the client's read end of the server's output, so
	// the server's next write fails (EPIPE).
	closeStdout()
	// terminate asks the server to shut down gracefully (SIGTERM).
	terminate() error
	// exited is closed when the server has exited and its output is closed.
	exited() <-chan struct{}
	// kill stops the server at once; exited is closed afterwards.
	kill()
	// result is the exit status (-1: killed by a signal) and the CPU time
	// used (0 when unknown), valid once exited is closed.
	result() (code int, cpu time.Duration)
	stderrTail() string
}

// procTarget is a child process over three pipes.
type procTarget struct {
	cmd  *exec.Cmd
	in   *os.File // our write end of its stdin
	out  *os.File // our read end of its stdout
	errs *tailBuffer
	done chan struct{}
	code int
	cpu  time.Duration
}

func startProcess(argv, env []string) (*procTarget, error) {
	if len(argv) == 0 {
		return nil, errors.New("fault: empty command")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	t := &procTarget{in: inW, out: outR, errs: &tailBuffer{max: 8 << 10}, done: make(chan struct{})}
	t.cmd = exec.Command(argv[0], argv[1:]...)
	t.cmd.Env = env
	t.cmd.Stdin = inR
	t.cmd.Stdout = outW
	t.cmd.Stderr = t.errs
	err = t.cmd.Start()
	// The child has its own copies: ours must go, or EOF and EPIPE would
	// never reach either side.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go t.wait()
	return t, nil
}

func (t *procTarget) wait() {
	_ = t.cmd.Wait()
	ps := t.cmd.ProcessState
	t.code = ps.ExitCode()
	t.cpu = ps.UserTime() + ps.SystemTime()
	close(t.done)
}

func (t *procTarget) stdin() io.WriteCloser { return t.in }
func (t *procTarget) stdout() io.Reader     { return t.out }
func (t *procTarget) closeStdout()          { t.out.Close() }
func (t *procTarget) terminate() error      { return t.cmd.Process.Signal(syscall.SIGTERM) }
func (t *procTarget) exited() <-chan struct{} {
	return t.done
}
func (t *procTarget) kill() {
	select {
	case <-t.done:
	default:
		_ = t.cmd.Process.Kill()
		<-t.done
	}
}
func (t *procTarget) result() (int, time.Duration) { return t.code, t.cpu }
func (t *procTarget) stderrTail() string           { return t.errs.String() }

// treeTarget is a server tree started with runtime.Start in an engine of
// its own, over in-memory pipes.
type treeTarget struct {
	inst *runtime.Instance
	inW  *io.PipeWriter
	outR *io.PipeReader
	outW *io.PipeWriter
	done chan struct{}
	code int
}

func startTree(srv *handlers.Server, opts runtime.Options) (*treeTarget, error) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		return nil, fmt.Errorf("fault: %w", err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	inst, err := runtime.Start(e, srv, inR, outW, opts)
	if err != nil {
		return nil, err
	}
	t := &treeTarget{inst: inst, inW: inW, outR: outR, outW: outW, done: make(chan struct{})}
	go func() {
		<-inst.Done()
		t.code = runtime.ExitCode(inst.Err())
		// A process's stdout closes when it exits; the pipe must too, or
		// the campaign's reader would wait forever.
		outW.Close()
		close(t.done)
	}()
	return t, nil
}

func (t *treeTarget) stdin() io.WriteCloser { return t.inW }
func (t *treeTarget) stdout() io.Reader     { return t.outR }
func (t *treeTarget) closeStdout()          { t.outR.Close() }
func (t *treeTarget) terminate() error {
	t.inst.Drain() // what Serve does on SIGTERM
	return nil
}
func (t *treeTarget) exited() <-chan struct{} { return t.done }
func (t *treeTarget) kill() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = t.inst.Stop(ctx) // an ended ctx: shut down without waiting for requests
	<-t.done
}
func (t *treeTarget) result() (int, time.Duration) { return t.code, 0 }
func (t *treeTarget) stderrTail() string           { return "" }

// tailBuffer keeps the last max bytes written to it: a server that logs a
// stack per panic must not make the campaign's memory grow with the run.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) >= w.max {
		w.b = append(w.b[:0], p[len(p)-w.max:]...)
		return len(p), nil
	}
	if over := len(w.b) + len(p) - w.max; over > 0 {
		w.b = append(w.b[:0], w.b[over:]...)
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
