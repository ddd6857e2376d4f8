package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHashFileScans: hashFile finds the time macros and the temporary
// directory anywhere in a file, across its 64 KiB reads too.
func TestHashFileScans(t *testing.T) {
	temp := []byte("/tmp/offcc-123456/")
	for _, tc := range []struct {
		name      string
		at        int
		needle    string
		macro, tp bool
	}{
		{"nothing", 0, "", false, false},
		{"macro at the start", 0, "__TIME__", true, false},
		{"macro across a read", 64<<10 - 3, "__TIMESTAMP__", true, false},
		{"temp across a read", 64<<10 - 5, string(temp) + "k.bin", false, true},
		{"temp at the end", 3 << 16, string(temp), false, true},
	} {
		data := []byte(strings.Repeat("x", 3<<16+len(temp)))
		copy(data[tc.at:], tc.needle)
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fi := hashFile(p, temp)
		if fi.err != nil || fi.sum != SumBytes(data) || fi.timeMacros != tc.macro || fi.mentionsTemp != tc.tp {
			t.Errorf("%s: err %v, sum ok %v, time macros %v (want %v), names the temporary directory %v (want %v)",
				tc.name, fi.err, fi.sum == SumBytes(data), fi.timeMacros, tc.macro, fi.mentionsTemp, tc.tp)
		}
	}
}
