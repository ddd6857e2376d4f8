package progress

import "syscall"

const ioctlGetTermios = syscall.TCGETS
