package stdio

import (
	"fmt"
	"os"
	"syscall"
)

// Claimed holds the process's protocol streams after Claim.
type Claimed struct {
	// In is a private duplicate of the standard input handle.
	In *os.File
	// Out is a private duplicate of the standard output handle: the only
	// way to the protocol stream.
	Out *os.File

	savedIn, savedOut syscall.Handle
	savedStdout       *os.File
	null              *os.File // the standard input handle until Restore
}

// Claim takes stdin and stdout for the protocol. After it returns, the
// standard output handle, and os.Stdout, are stderr's (stray prints of Go
// code, and of child processes that inherit the handle, land on stderr),
// and the standard input handle reads NUL. Restore undoes it.
func Claim() (*Claimed, error) {
	in, err := dupHandle(syscall.Stdin)
	if err != nil {
		return nil, fmt.Errorf("stdio: duplicate stdin: %w", err)
	}
	out, err := dupHandle(syscall.Stdout)
	if err != nil {
		syscall.CloseHandle(in)
		return nil, fmt.Errorf("stdio: duplicate stdout: %w", err)
	}
	c := &Claimed{
		In:          os.NewFile(uintptr(in), "mcprt-stdin"),
		Out:         os.NewFile(uintptr(out), "mcprt-stdout"),
		savedIn:     syscall.Stdin,
		savedOut:    syscall.Stdout,
		savedStdout: os.Stdout,
	}
	if err := setStdHandle(syscall.STD_OUTPUT_HANDLE, syscall.Stderr); err != nil {
		c.In.Close()
		c.Out.Close()
		return nil, fmt.Errorf("stdio: point stdout at stderr: %w", err)
	}
	os.Stdout = os.Stderr
	if null, err := os.Open(os.DevNull); err == nil {
		// Kept, not just left open: an unreachable *os.File is closed by
		// its finalizer, and the process's standard input with it.
		c.null = null
		_ = setStdHandle(syscall.STD_INPUT_HANDLE, syscall.Handle(null.Fd()))
	}
	return c, nil
}

// Restore puts the standard handles and os.Stdout back and closes the
// private copies. Call it only after the reader and writer are done with
// them.
func (c *Claimed) Restore() {
	if c.savedStdout != nil {
		_ = setStdHandle(syscall.STD_OUTPUT_HANDLE, c.savedOut)
		_ = setStdHandle(syscall.STD_INPUT_HANDLE, c.savedIn)
		os.Stdout = c.savedStdout
		c.savedStdout = nil
	}
	if c.null != nil {
		c.null.Close()
		c.null = nil
	}
	c.In.Close()
	c.Out.Close()
}

func dupHandle(h syscall.Handle) (syscall.Handle, error) {
	p, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, err
	}
	var d syscall.Handle
	err = syscall.DuplicateHandle(p, h, p, &d, 0, false, syscall.DUPLICATE_SAME_ACCESS)
	return d, err
}

var procSetStdHandle = syscall.NewLazyDLL("kernel32.dll").NewProc("SetStdHandle")

func setStdHandle(which int, h syscall.Handle) error {
	r, _, err := procSetStdHandle.Call(uintptr(which), uintptr(h))
	if r == 0 {
		return err
	}
	return nil
}
