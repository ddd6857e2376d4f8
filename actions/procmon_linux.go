package actions

import (
	"os"
	"syscall"
)

// peakRSS returns the peak resident set size, in bytes, of a process that
// has been waited for (and of the children it waited for): wait4's
// ru_maxrss, which Linux gives in KiB.
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		return int64(ru.Maxrss) * 1024
	}
	return 0
}
