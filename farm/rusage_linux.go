package farm

import (
	"os"
	"syscall"
)

// peakRSS returns the peak resident memory of a finished process and the
// children it waited for (wait4's ru_maxrss, in KiB on Linux), in bytes;
// 0 when unknown.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 0 {
		return ru.Maxrss << 10
	}
	return 0
}
