//go:build !linux

package farm

import "os"

// peakRSS returns 0: the peak memory of a job is measured on Linux only.
func peakRSS(*os.ProcessState) int64 { return 0 }
