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
}

// Claim takes stdin and stdout for the protocol. After it returns, fd 1 is
// a copy of fd 2 (stray prints land on stderr), fd 0 reads /dev/null (no one
// else can steal protocol bytes), and SIGPIPE is ignored. Restore undoes it.
//
// Stray output then reaches stderr as raw bytes. To have it as lines (into
// the log, and to the client), follow Claim with CaptureStdout, whose Stop
// puts fd 1 back on stderr; Stop it before Restore.
func Claim() (*Claimed, error) {
	signal.Ignore(syscall.SIGPIPE)
	outFd, err := dupCloexec(1)
	if err != nil {
		return nil, fmt.Errorf("stdio: dup stdout: %w", err)
	}
	inFd, err := dupCloexec(0)
	if err != nil {
		syscall.Close(outFd)
		return nil, fmt.Errorf("stdio: dup stdin: %w", err)
	}
	savedOut, _ := dupCloexec(1)
	savedIn, _ := dupCloexec(0)
	if err := dup2(2, 1); err != nil {
		syscall.Close(outFd)
		syscall.Close(inFd)
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
		In:       os.NewFile(uintptr(inFd), "mcprt-stdin"),
		Out:      os.NewFile(uintptr(outFd), "mcprt-stdout"),
		savedOut: savedOut,
		savedIn:  savedIn,
	}, nil
}

// Restore points fd 0 and fd 1 back where they were and closes the private
// copies. Call it only after the reader and writer are done with them.
func (c *Claimed) Restore() {
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
