//go:build unix

package atomicfile

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

var (
	umaskOnce  sync.Once
	umaskValue os.FileMode = 0o022
)

// umask returns the process umask, read from /proc/self/status so that no
// other goroutine ever sees it changed (syscall.Umask would have to set it).
func umask() os.FileMode {
	umaskOnce.Do(func() {
		data, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					umaskValue = os.FileMode(n)
				}
			}
		}
	})
	return umaskValue
}
