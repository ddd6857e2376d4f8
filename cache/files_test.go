package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestCurrentDigest: a build takes a file's digest again after an action
// only when the file may have changed: a settled file with the stat it
// was hashed at keeps its digest; an edit (a new stat) is hashed again,
// and so is a file that had not settled when hashed, whose stat vouches
// for nothing (it could change again within one timestamp tick).
func TestCurrentDigest(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "h.h")
	write := func(data string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Same size, same stat but for the bytes: what only a rehash sees.
	// (The clock is moved, not the file: a file's ctime cannot be set.)
	clock := time.Now()
	d := newFileDigests(filepath.Join(dir, "tmp"), nil)
	d.now = func() time.Time { return clock }
	write("int a;\n")
	if fi := d.get(p); fi.err != nil || fi.settled {
		t.Fatalf("a file written now: err %v, settled %v (want not settled)", fi.err, fi.settled)
	}
	// Not settled when hashed: rehashed even with its stat unchanged.
	d.files[p].sum = Sum{} // what a stale digest would be
	if fi := d.current(p); fi.sum != SumBytes([]byte("int a;\n")) {
		t.Fatalf("an unsettled file's digest was reused")
	}
	// Settled: hashed at a time trustStatAge after its last change.
	clock = clock.Add(2 * trustStatAge)
	d.forget(p)
	settled := d.get(p)
	if !settled.settled {
		t.Fatalf("a file left alone for %v is not settled", 2*trustStatAge)
	}
	if fi := d.current(p); fi != settled {
		t.Errorf("a settled file with its stat unchanged was hashed again")
	}
	// Edited: a new stat, so a new digest, whatever the clock says. (Its
	// size changes: an edit of the same size within one timestamp tick
	// keeps the stat, which is what the settled rule above is for.)
	write("int bb;\n")
	if fi := d.current(p); fi.sum != SumBytes([]byte("int bb;\n")) {
		t.Errorf("an edited file kept its old digest")
	}
}
