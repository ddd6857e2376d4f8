//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package term

import (
	"os"
	"syscall"
	"unsafe"
)

// The standard library's syscall package suffices here; the module does not
// depend on golang.org/x/sys or x/term directly.

// ioctl runs the ioctl req on f's descriptor with argument arg. It goes
// through SyscallConn rather than Fd, which would put f in blocking mode.
func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
	})
	return err == nil && errno == 0
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	var t syscall.Termios
	return ioctl(f, ioctlGetTermios, unsafe.Pointer(&t))
}

// Width returns the number of columns of the terminal f, or 0.
func Width(f *os.File) int {
	var ws struct{ row, col, xpixel, ypixel uint16 }
	if !ioctl(f, syscall.TIOCGWINSZ, unsafe.Pointer(&ws)) {
		return 0
	}
	return int(ws.col)
}
