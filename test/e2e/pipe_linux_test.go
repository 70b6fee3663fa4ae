package e2e

import (
	"os"
	"syscall"
	"unsafe"
)

// unreadBytes reports how many bytes written to the pipe f (either end)
// its reader has not taken yet, or -1 when it cannot tell.
func unreadBytes(f *os.File) int {
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return -1
	}
	return int(n)
}
