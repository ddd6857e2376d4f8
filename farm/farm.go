// Package farm runs offcc's device jobs on other machines through Redis:
// the client side (Client, an actions.Remote that the executor asks beside
// its local slots) and the worker daemon (Worker, "offcc worker").
//
// One Redis server (the shared cache's, or another) carries everything,
// under the key prefix of its redisstore.Store ("offcc:"):
//
//	farm:workers        hash: worker name -> JSON WorkerInfo, rewritten
//	                    every second; older than three seconds is dead
//	farm:q:<toolchain>  stream of jobs for one toolchain identity, read
//	                    by the consumer group "workers"
//	farm:claim:<job>    string: who owns the job (a worker name, or
//	                    "client" when the client took it back), with a
//	                    lease the owning worker keeps renewing
//	farm:done:<job>     list: the worker pushes its name when the
//	                    job's result is stored
//	e:<key>, b:<sha>    the job's inputs and its result, as cache
//	                    entries and blobs (content-addressed, verified)
//
// A job names its tool by identity (ELF build IDs, as cache keys do) and
// ships every file the tool reads; a worker runs only its own clang and
// lld, and NVIDIA's ptxas, fatbinary and nvlink where it has the client's
// CUDA toolkit (whose identity names a stream of its own, farm:q:cuda-...:
// see cuda.go), with clang confined by a VFS overlay to the shipped files
// under their original paths and the other tools given copies of them,
// so its output is byte-identical to a local run.
// The client runs a job itself when no worker takes it in time, when the
// worker holding it stops renewing its lease (it died), when a worker
// refuses it, or when Redis fails.
//
// Nothing in Redis is believed for being there: whoever can write to the
// server is not trusted. A job entry is signed by its client's key and a
// worker runs it only if a client key it trusts signed it for that job
// (trust, cache.SignEntry); a result entry is signed by its worker's key
// and names the job, toolchain and job entry it answers, and the client
// believes only that. A worker runs a job only if its command line passes
// an allow-list of options (check), and then in a sandbox (Sandbox:
// bubblewrap and Landlock, with limits).
package farm

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"path/filepath"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/toolchain"
)

// Group is the consumer group of every job stream.
const Group = "workers"

// Key names under the store's prefix.
func workersKey(prefix string) string          { return prefix + "farm:workers" }
func queueKey(prefix, toolchain string) string { return prefix + "farm:q:" + toolchain }
func claimKey(prefix, id string) string        { return prefix + "farm:claim:" + id }
func doneKey(prefix, id string) string         { return prefix + "farm:done:" + id }
func jobEntry(id string) cache.Sum             { return cache.SumBytes([]byte("offcc farm job\x00" + id)) }
func resultEntry(id string) cache.Sum          { return cache.SumBytes([]byte("offcc farm result\x00" + id)) }

// Entry kinds of the farm's records in the store.
const (
	kindJob    cache.Kind = "job"
	kindResult cache.Kind = "job-result"
)

// clientOwner is the claim value of a job its client took back.
const clientOwner = "client"

// deadAfter is how old a worker's registration may be before it counts as
// dead.
const deadAfter = 3 * time.Second

// Tools are the executables a worker runs, by the name jobs give them:
// those of the LLVM installation (llvmToolNames), then NVIDIA's CUDA tools
// (cudaTools), which a worker runs where it has a CUDA toolkit (see
// ToolPath).
var Tools = []string{"clang", "lld", "ptxas", "fatbinary", "nvlink"}

// llvmToolNames are the tools of Tools that an LLVM installation provides,
// whose identities make its toolchain's.
var llvmToolNames = []string{"clang", "lld"}

// toolchainOf returns the identity of each of llvmToolNames in the directory
// of clang (the digest of its cache.ToolIdentity text, by tool name) and
// of the toolchain they make: a digest of those, 16 hex digits. Workers
// and clients with the same toolchain identity produce the same bytes
// from the same command lines. (A CUDA toolkit has an identity of its
// own: see cudaToolchainOf.)
func toolchainOf(clang string) (ids map[string]string, toolchain string) {
	return identitiesOf(toolDir(clang), llvmToolNames, "")
}

// identitiesOf returns the identity of each of tools in dir (the digest of
// its cache.ToolIdentity text, by tool name) and 16 hex digits of a digest
// of salt and those texts.
func identitiesOf(dir string, tools []string, salt string) (ids map[string]string, digest string) {
	ids = map[string]string{}
	all := sha256.New()
	all.Write([]byte(salt))
	for _, t := range tools {
		text := cache.ToolIdentity(filepath.Join(dir, t))
		all.Write([]byte(text))
		sum := sha256.Sum256([]byte(text))
		ids[t] = hex.EncodeToString(sum[:])
	}
	return ids, hex.EncodeToString(all.Sum(nil))[:16]
}

// WorkerInfo is what a worker announces in farm:workers.
type WorkerInfo struct {
	Name      string `json:"name"`
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	Toolchain string `json:"toolchain"`
	LLVM      string `json:"llvm"` // the clang it runs
	// CUDA is the identity of the CUDA toolkit whose ptxas, fatbinary
	// and nvlink the worker runs (see cudaToolchainOf), "" for none;
	// CUDAPath its directory.
	CUDA     string `json:"cuda,omitempty"`
	CUDAPath string `json:"cuda_path,omitempty"`
	Slots    int    `json:"slots"`
	Running  int    `json:"running"`
	Done     int64  `json:"done"`
	Refused  int64  `json:"refused"`
	Failed   int64  `json:"failed"`
	Draining bool   `json:"draining,omitempty"`
	// Memory is what the worker's jobs may use together, in bytes (0:
	// unknown, jobs are taken by slots alone), and MemorySource where
	// that comes from ("--memory", "MemAvailable"); Reserved is the
	// expected peaks of the jobs it runs, together.
	Memory       int64  `json:"memory,omitempty"`
	MemorySource string `json:"memory_source,omitempty"`
	Reserved     int64  `json:"reserved"`
	// Sandbox names the layers confining jobs (none: unconfined);
	// Insecure lists what the worker runs without ("no-sandbox",
	// "unsigned"); Key is its signing key's name and ID.
	Sandbox  []string `json:"sandbox"`
	Insecure []string `json:"insecure,omitempty"`
	Key      string   `json:"key,omitempty"`
	Started  int64    `json:"started"` // Unix milliseconds
	Seen     int64    `json:"seen"`    // Unix milliseconds
}

// alive reports whether the registration is recent.
func (w *WorkerInfo) alive(now time.Time) bool {
	return now.Sub(time.UnixMilli(w.Seen)) < deadAfter && !w.Draining
}

func newHash() hash.Hash { return sha256.New() }

// toolDir returns the directory the LLVM tools are in: that of clang
// after symbolic links (Debian's /usr/bin/clang-22 leads to
// /usr/lib/llvm-22/bin/clang).
func toolDir(clang string) string {
	if real, err := filepath.EvalSymlinks(clang); err == nil {
		clang = real
	}
	return filepath.Dir(clang)
}

// ToolDir returns the directory of the LLVM tools a worker with clang at
// clang runs: that of clang after symbolic links.
func ToolDir(clang string) string { return toolDir(clang) }

// ReleaseTables returns the option tables with which the farm reads the
// jobs of the clang at clang: those of LLVM release major, or, for 0, of
// the release toolchain.Find finds in clang's directory. Clients and
// workers read a job with the tables of the release that runs it (the
// same clang on both sides: see Toolchain), so an option only another
// release knows is unknown, and the job stays on its client. A release
// offcc has no tables of is an error.
func ReleaseTables(clang string, major int) (*options.Tables, error) {
	if major == 0 {
		l, err := toolchain.Find(filepath.Dir(clang), func(string) string { return "" })
		if err != nil {
			return nil, err
		}
		major = l.Major
	}
	return options.ForRelease(major)
}

// Toolchain returns the identity of the LLVM installation whose clang is at
// clang, as workers announce it and jobs name it (see toolchainOf).
func Toolchain(clang string) string {
	_, t := toolchainOf(clang)
	return t
}
