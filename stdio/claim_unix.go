//go:build unix

package stdio

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Claimed holds the process's protocol streams after Claim.
type Claimed struct {
	// In is a private duplicate of fd 0. When stdin is a pipe or socket it is
	// non-blocking and pollable, so SetReadDeadline can interrupt a read.
	In *os.File
	// Out is a private duplicate of fd 1: the only way to the protocol stream.
	Out *os.File

	savedOut, savedIn int
	unignorePipe      bool // Claim ignored SIGPIPE, which was not before
}

// Claim takes stdin and stdout for the protocol. After it returns, fd 1 is
// a copy of fd 2 (stray prints land on stderr), fd 0 reads /dev/null (no one
// else can steal protocol bytes), and SIGPIPE is ignored. Restore undoes it,
// SIGPIPE included (unless it was ignored before Claim). When Claim fails,
// it leaves the process as it found it.
//
// Stray output then reaches stderr as raw bytes. To have it as lines (into
// the log, and to the client), follow Claim with CaptureStdout, whose Stop
// puts fd 1 back on stderr; Stop it before Restore.
func Claim() (*Claimed, error) { return claim(dup2) }

// claim is Claim with its dup2 given, so that a test can make it fail.
func claim(dup2 func(from, to int) error) (_ *Claimed, err error) {
	// A write to a closed pipe must be an error (EPIPE), not the end of
	// the process: the client going away is something to handle.
	pipeWasIgnored := signal.Ignored(syscall.SIGPIPE)
	signal.Ignore(syscall.SIGPIPE)
	var fds []int // ours, closed again if Claim fails
	defer func() {
		if err == nil {
			return
		}
		for _, fd := range fds {
			syscall.Close(fd)
		}
		if !pipeWasIgnored {
			unignoreSIGPIPE()
		}
	}()
	dup := func(fd int, what string) (int, error) {
		nfd, err := dupCloexec(fd)
		if err != nil {
			return -1, fmt.Errorf("stdio: dup %s: %w", what, err)
		}
		fds = append(fds, nfd)
		return nfd, nil
	}
	outFd, err := dup(1, "stdout")
	if err != nil {
		return nil, err
	}
	inFd, err := dup(0, "stdin")
	if err != nil {
		return nil, err
	}
	// What Restore puts back: without them it could not.
	savedOut, err := dup(1, "stdout")
	if err != nil {
		return nil, err
	}
	savedIn, err := dup(0, "stdin")
	if err != nil {
		return nil, err
	}
	if err := dup2(2, 1); err != nil {
		return nil, fmt.Errorf("stdio: point fd 1 at stderr: %w", err)
	}
	if null, err := os.Open(os.DevNull); err == nil {
		_ = dup2(int(null.Fd()), 0)
		null.Close()
	}
	if pollable(inFd) {
		// A pipe or socket read end is shared only with our own children, so
		// O_NONBLOCK here does not surprise anyone; a terminal is shared with
		// the shell, so it is left alone (and its reads cannot be interrupted).
		_ = syscall.SetNonblock(inFd, true)
	}
	return &Claimed{
		In:           os.NewFile(uintptr(inFd), "mcprt-stdin"),
		Out:          os.NewFile(uintptr(outFd), "mcprt-stdout"),
		savedOut:     savedOut,
		savedIn:      savedIn,
		unignorePipe: !pipeWasIgnored,
	}, nil
}

// Restore points fd 0 and fd 1 back where they were, closes the private
// copies, and stops ignoring SIGPIPE if Claim started it (and nothing
// changed it since: signal.Notify after Claim is left alone). Call it only
// after the reader and writer are done with them.
func (c *Claimed) Restore() {
	if c.unignorePipe && signal.Ignored(syscall.SIGPIPE) {
		unignoreSIGPIPE()
	}
	c.unignorePipe = false
	if c.savedOut >= 0 {
		_ = dup2(c.savedOut, 1)
		syscall.Close(c.savedOut)
		c.savedOut = -1
	}
	if c.savedIn >= 0 {
		_ = dup2(c.savedIn, 0)
		syscall.Close(c.savedIn)
		c.savedIn = -1
	}
	c.In.Close()
	c.Out.Close()
}

// unignoreSIGPIPE gives SIGPIPE back its Go default (a broken pipe on fd 1
// or 2 ends the process; elsewhere it is the write's EPIPE). signal.Reset
// does not undo signal.Ignore: the runtime keeps the signal marked ignored
// until a Notify; so Notify, then Stop, which leaves no handler.
func unignoreSIGPIPE() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	signal.Stop(ch)
}

func dupCloexec(fd int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	nfd, err := syscall.Dup(fd)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(nfd)
	return nfd, nil
}

func pollable(fd int) bool {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return false
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK:
		return true
	}
	return false
}
