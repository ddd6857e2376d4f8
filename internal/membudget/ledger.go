package membudget

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
)

// ledgerHeader starts a ledger file; a file without it is started afresh.
const ledgerHeader = "offcc-mem-ledger 1\n"

// LedgerDir returns the directory for the ledger: /dev/shm when it is a
// writable directory, else cacheDir.
func LedgerDir(cacheDir string) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", ".offcc-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return cacheDir
}

// ledgerName names the ledger file of this user and this memory cgroup,
// so that the offcc processes of one cgroup share it.
func ledgerName(env Env) string {
	cg := "-"
	if c, err := Locate(env); err == nil {
		cg = c.Path
	}
	h := fnv.New64a()
	h.Write([]byte(cg))
	return fmt.Sprintf("offcc-mem-%d-%016x", os.Getuid(), h.Sum64())
}

// LedgerPath returns the path of the ledger that OpenLedger(dir) opens.
func LedgerPath(dir string) string {
	return filepath.Join(dir, ledgerName(System()))
}
