//go:build !linux

package membudget

import "os"

// PeakRSS returns 0 (unknown): ru_maxrss's unit differs between systems,
// and offcc measures memory only on Linux.
func PeakRSS(*os.ProcessState) int64 { return 0 }
