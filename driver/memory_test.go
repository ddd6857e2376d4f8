package driver

import (
	"testing"
)

// TestOffloadMemLimit checks where the memory limit comes from:
// --offload-mem= over OFFCC_OFFLOAD_MEM (which the configuration file's
// offload_mem sets), off turning memory scheduling off, and a bad value
// named in one line.
func TestOffloadMemLimit(t *testing.T) {
	for _, tc := range []struct {
		opt, env  string
		want      int64
		named     string
		off       bool
		wantError string
	}{
		{"", "", 0, "", false, ""},
		{"600M", "", 600 << 20, "--offload-mem", false, ""},
		{"", "1G", 1 << 30, "OFFCC_OFFLOAD_MEM", false, ""},
		{"300M", "1G", 300 << 20, "--offload-mem", false, ""},
		{"", "off", 0, "OFFCC_OFFLOAD_MEM", true, ""},
		{"off", "1G", 0, "--offload-mem", true, ""},
		{"", "0", 0, "OFFCC_OFFLOAD_MEM", false, ""},
		{"", "lots", 0, "", false, "OFFCC_OFFLOAD_MEM=lots: invalid memory size 'lots': expected a size such as 600M or 'off'"},
	} {
		inv := &Invocation{Env: []string{"OFFCC_OFFLOAD_MEM=" + tc.env}}
		n, named, off, err := inv.memoryLimit(&Options{OffloadMem: tc.opt})
		if tc.wantError != "" {
			if err == nil || err.Error() != tc.wantError {
				t.Errorf("--offload-mem=%q OFFCC_OFFLOAD_MEM=%q: error %v; want %s", tc.opt, tc.env, err, tc.wantError)
			}
			continue
		}
		if err != nil || n != tc.want || named != tc.named || off != tc.off {
			t.Errorf("--offload-mem=%q OFFCC_OFFLOAD_MEM=%q: %d, %q, off %v, %v; want %d, %q, off %v",
				tc.opt, tc.env, n, named, off, err, tc.want, tc.named, tc.off)
		}
	}
}
