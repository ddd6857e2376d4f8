//go:build !linux

package membudget

import "errors"

// Ledger shares one memory budget between the offcc processes of a
// cgroup; it is Linux-only.
type Ledger struct{}

// OpenLedger fails: the ledger is Linux-only.
func OpenLedger(dir string) (*Ledger, error) {
	return nil, errors.New("memory ledger: Linux-only")
}

// Path returns the ledger file's path.
func (l *Ledger) Path() string { return "" }

// Reserve reserves nothing.
func (l *Ledger) Reserve(n, budget int64, force bool) (bool, error) { return force || n <= budget, nil }

// Release releases nothing.
func (l *Ledger) Release(n int64) error { return nil }

// Others returns 0.
func (l *Ledger) Others() int64 { return 0 }

// Mine returns 0.
func (l *Ledger) Mine() int64 { return 0 }

// Close does nothing.
func (l *Ledger) Close() error { return nil }
