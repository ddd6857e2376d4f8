package farm

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/offcc/offcc/cache"
)

// benchJobEntry is a job entry of the size of a heavy HIP device compile's:
// a 200-argument command line and 300 shipped headers.
func benchJobEntry() *cache.Entry {
	j := &Job{Version: JobVersion, ID: "0123456789abcdef01234567", Toolchain: "d2ee1db8b9af6813", Tool: "clang", Dir: "/src/project"}
	for i := 0; i < 200; i++ {
		j.Args = append(j.Args, fmt.Sprintf("-internal-isystem/usr/include/dir%d", i))
	}
	e := &cache.Entry{Kind: kindJob}
	for i := 0; i < 300; i++ {
		name := fmt.Sprintf("f%d", i)
		j.Files = append(j.Files, File{Path: fmt.Sprintf("/usr/include/some/header%d.h", i), Blob: name, Mode: 0o644})
		e.Blobs = append(e.Blobs, cache.Blob{Name: name, Size: int64(1000 + i), Sum: cache.SumBytes([]byte(name)), Mode: 0o644})
	}
	e.Record, _ = json.Marshal(j)
	return e
}

// BenchmarkSignJob: what signing costs a client per job.
func BenchmarkSignJob(b *testing.B) {
	e, k := benchJobEntry(), testKeys().client.SigningKey
	b.SetBytes(int64(len(cache.EncodeIndex(e))))
	for b.Loop() {
		cache.SignEntry(k, jobEntry("0123456789abcdef01234567"), e)
	}
}

// BenchmarkVerifyJob: what verifying costs a worker per job.
func BenchmarkVerifyJob(b *testing.B) {
	e, k := benchJobEntry(), testKeys().client.SigningKey
	cache.SignEntry(k, jobEntry("0123456789abcdef01234567"), e)
	r := testKeys().worker.Clients
	b.SetBytes(int64(len(cache.EncodeIndex(e))))
	for b.Loop() {
		if _, err := cache.VerifyEntry(r, jobEntry("0123456789abcdef01234567"), e); err != nil {
			b.Fatal(err)
		}
	}
}
