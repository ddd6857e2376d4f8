package membudget

import (
	"os"
	"syscall"
)

// PeakRSS returns the peak resident set size, in bytes, of a process that
// has been waited for, and of the children it waited for (wait4's
// ru_maxrss, which Linux gives in KiB); 0 when unknown.
func PeakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil && ru.Maxrss > 0 {
		return ru.Maxrss << 10
	}
	return 0
}
