//go:build !linux

package actions

import "os"

// peakRSS returns 0 (unknown): ru_maxrss's unit differs between systems,
// and memory scheduling measures only on Linux.
func peakRSS(ps *os.ProcessState) int64 { return 0 }
