//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package progress

import "syscall"

const ioctlGetTermios = syscall.TIOCGETA
