package term

import "syscall"

const ioctlGetTermios = syscall.TCGETS
