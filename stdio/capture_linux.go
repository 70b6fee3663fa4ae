package stdio

import "syscall"

const fSetPipeSz = 1031 // F_SETPIPE_SZ, not in package syscall

// growPipe asks for a 1 MiB pipe (the unprivileged maximum by default), so
// that a burst of stray output does not block its writer while the reader
// is waiting to be scheduled. Best effort: the default 64 KiB still works.
func growPipe(fd int) {
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), fSetPipeSz, 1<<20)
}
