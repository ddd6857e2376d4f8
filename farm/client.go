package farm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/internal/includescan"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/toolchain"
	"github.com/offcc/offcc/trust"
	"github.com/redis/go-redis/v9"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// Clang is the clang of the build; jobs go to workers with the same
	// toolchain identity (see Toolchain).
	Clang string
	// Release is the LLVM major version of Clang (toolchain.LLVM.Major):
	// the client reads and checks its jobs with that release's option
	// tables (see ReleaseTables), as its workers, which run the same
	// clang, do. 0 is the release found in Clang's directory.
	Release int
	// TempDir holds the client's scratch files (dependency scans).
	TempDir string
	// Pickup is how long a job may wait for a worker before the client
	// runs it itself (default 2s).
	Pickup time.Duration
	// Warn, when not nil, is told once when the farm is given up for the
	// rest of the process (the server failed), and once when a worker's
	// result is rejected.
	Warn func(message string)
	// Keys are the client's signing key (its jobs) and the workers it
	// trusts (their results); see trust.Settings.
	Keys *trust.Settings
	// Shell is the build's Shell, through which the client runs its
	// dependency scans (shown under -v, killed with the build); nil is a
	// quiet Shell of its own.
	Shell *actions.Shell
	// Insecure sends unsigned jobs (signed all the same where a key is
	// given) and believes unsigned results: for a farm whose Redis only
	// trusted machines can write (OFFCC_REMOTE_EXEC_INSECURE=1).
	Insecure bool
	// NoRace turns the races off (OFFCC_REMOTE_EXEC_RACE=0): Deadlines
	// gives none, and a job still remote when it is late (see Deadlines)
	// is taken back from its worker and runs locally.
	NoRace bool
	// Peaks, when not nil, gives each job its expected peak memory, by
	// which workers admit it, and learns the peak a worker measured.
	Peaks Peaks
}

// Peaks is the build's knowledge of its jobs' peak memory (the memory
// governor's).
type Peaks interface {
	// Expect returns the peak a is expected to reach, in bytes (0: not
	// known).
	Expect(a *actions.Action) int64
	// Learn records the peak a reached on a worker.
	Learn(a *actions.Action, peak int64)
	// ExpectTime returns how long a is expected to run (0: not known),
	// from which its remote run's deadlines derive (see Deadlines).
	ExpectTime(a *actions.Action) time.Duration
	// LearnTime records how long a ran on a worker.
	LearnTime(a *actions.Action, d time.Duration)
}

// Client sends actions to workers; it implements actions.Remote. A client
// whose server fails gives the farm up for the rest of the process (one
// warning) and every action runs locally.
type Client struct {
	store     *redisstore.Store
	rdb       *redis.Client
	opt       ClientOptions
	toolchain string
	toolDir   string
	toolIDs   map[string]string
	host      string
	cwd       string
	// tables are the option tables of the release of opt.Clang, which
	// read the jobs' command lines.
	tables *options.Tables

	// includes finds the files a compile reads without running clang.
	includes *includescan.Scanner
	// digests memoises the blobs of the files jobs ship, by path, while
	// their size and modification time stay the same.
	digests sync.Map // path -> memoBlob
	// named memoises whether host IR files hold inode-named OpenMP
	// kernels, by path (see inodeNamed).
	named sync.Map // path -> memoNamed
	// kits memoises the identities of CUDA toolkits, by directory (see
	// cudaKit).
	kits sync.Map // dir -> *cudaKit
	// pathKit finds the directory of the CUDA toolkit on PATH, once.
	pathKit func() string

	// rejected counts the results not believed (see Rejected).
	rejected atomic.Int64
	// rejectWarned: the first rejection has been warned of.
	rejectWarned atomic.Bool

	mu     sync.Mutex
	slots  int // live workers' slots
	others int // other clients' jobs waiting in the queue, at the last refresh
	sent   int // this client's jobs in the queue now
	// kitsLive are the CUDA toolkits of live workers (their identities),
	// and kitsUsed those of this client's CUDA tool jobs.
	kitsLive map[string]bool
	kitsUsed map[string]bool
	failed   bool
	warned   bool
	started  sync.Once
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

var (
	_ actions.Remote          = (*Client)(nil)
	_ actions.RemoteDeadlines = (*Client)(nil)
)

// NewClient returns a client of the farm on store's server. It does no
// work until the first action the farm accepts is ready (a build with
// nothing to send costs nothing): then it computes the toolchain's
// identity, reads the farm's capacity, and rereads it every second until
// Close. Unless opt.Insecure, it needs a signing key and trusted worker
// keys: without them it returns an error (and the build runs locally), as
// it does for a release of LLVM offcc has no option tables of.
func NewClient(store *redisstore.Store, opt ClientOptions) (*Client, error) {
	if opt.Pickup <= 0 {
		opt.Pickup = 2 * time.Second
	}
	if opt.Keys == nil {
		opt.Keys = &trust.Settings{}
	}
	if !opt.Insecure {
		switch {
		case opt.Keys.SigningKey == nil:
			return nil, fmt.Errorf("no signing key (%s) for the jobs, and not marked insecure (%s=1)", trust.EnvSigningKey, EnvInsecure)
		case opt.Keys.Workers.Len() == 0:
			return nil, fmt.Errorf("no trusted worker keys (%s), and not marked insecure (%s=1)", trust.EnvWorkers, EnvInsecure)
		}
	}
	tables, err := ReleaseTables(opt.Clang, opt.Release)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	cwd, _ := os.Getwd()
	return &Client{store: store, rdb: store.Client(), opt: opt, host: host, cwd: cwd, tables: tables,
		toolDir: toolDir(opt.Clang), stop: make(chan struct{}),
		includes: includescan.NewFor(tables), pathKit: sync.OnceValue(cudaDirOnPath),
		kitsLive: map[string]bool{}, kitsUsed: map[string]bool{}}, nil
}

// EnvInsecure is the environment variable that lets a client use a farm
// without keys.
const EnvInsecure = "OFFCC_REMOTE_EXEC_INSECURE"

// Rejected returns how many results the client did not believe (unsigned,
// signed by an untrusted key, or for another job); each of those jobs ran
// locally.
func (c *Client) Rejected() int64 { return c.rejected.Load() }

// reject counts a result not believed, warning of the first.
func (c *Client) reject(why string) {
	c.rejected.Add(1)
	if c.opt.Warn != nil && c.rejectWarned.CompareAndSwap(false, true) {
		c.opt.Warn(fmt.Sprintf("build farm %s: %s; the job runs locally", c.store.Name(), why))
	}
}

// start computes the identities and starts the capacity updates, once.
func (c *Client) start() {
	c.started.Do(func() {
		c.toolIDs, c.toolchain = toolchainOf(c.opt.Clang)
		c.refresh()
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-c.stop:
					return
				case <-t.C:
					if !c.usable() {
						return
					}
					c.refresh()
				}
			}
		}()
	})
}

// Close stops the client's capacity updates.
func (c *Client) Close() {
	c.started.Do(func() {}) // no start after Close
	c.stopOnce.Do(func() { close(c.stop) })
	c.wg.Wait()
}

// Toolchain returns the identity jobs are sent under.
func (c *Client) Toolchain() string {
	c.start()
	return c.toolchain
}

// refresh reads the workers' registrations and the queue: the slots of
// live workers of this toolchain, and the jobs waiting in the queue (not
// yet taken by a worker) that are not this client's.
func (c *Client) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	all, err := c.rdb.HGetAll(ctx, workersKey(c.store.Prefix())).Result()
	if err != nil {
		c.fail(err)
		return
	}
	n := 0
	now := time.Now()
	c.mu.Lock()
	used := maps.Clone(c.kitsUsed)
	c.mu.Unlock()
	live := map[string]bool{}
	for _, v := range all {
		var w WorkerInfo
		if json.Unmarshal([]byte(v), &w) != nil || !w.alive(now) {
			continue
		}
		if w.CUDA != "" {
			live[w.CUDA] = true
		}
		if w.Toolchain == c.toolchain || used[w.CUDA] {
			n += w.Slots
		}
	}
	var waiting int64
	for _, tc := range append([]string{c.toolchain}, slices.Sorted(maps.Keys(used))...) {
		q := queueKey(c.store.Prefix(), tc)
		entries, err := c.rdb.XLen(ctx, q).Result()
		if err != nil {
			c.fail(err)
			return
		}
		var running int64
		if p, err := c.rdb.XPending(ctx, q, Group).Result(); err == nil {
			running = p.Count
		}
		waiting += max(0, entries-running)
	}
	c.mu.Lock()
	c.slots = n
	c.others = max(0, int(waiting)-c.sent)
	c.kitsLive = live
	c.mu.Unlock()
}

func (c *Client) usable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.failed
}

// fail gives the farm up after a server error, warning once: the warning
// names the server as the user gave it (less its password), then why, in
// words (redisstore.Describe: "cannot connect: connection refused"), not
// Go's "dial tcp ADDR: ...".
func (c *Client) fail(err error) { c.giveUp(redisstore.Describe(err)) }

// Slots returns the slots of the live workers of the client's toolchain
// less the jobs of other clients waiting for one: a job may queue behind
// running ones (a worker takes it the moment it is free), not behind
// other waiting ones (many offcc processes of one make -j share the farm
// first come, first served, and the rest runs locally).
func (c *Client) Slots() int {
	c.start()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		return 0
	}
	return max(0, c.slots-c.others)
}

// Accepts reports whether a can run on a worker: a clang -cc1 compile of
// a HIP, CUDA or SYCL source (device or host side), an OpenMP front end
// (host or device) with stable kernel names, a clang -cc1 backend, or an
// lld device link, of the client's toolchain, whose reads can all be
// named; or a ptxas, fatbinary or nvlink job of a CUDA toolkit that a live
// worker has (see acceptsCUDA).
//
// clang names OpenMP kernels after the file of their target region: by its
// device and inode where the name it knows the file by exists from the
// process's directory, else by a hash of that name. offcc's driver runs
// OpenMP front ends in an empty directory (Action.Dir) with
// "-working-directory W" (see stableWorkDir), so that relative names are
// hashed; a worker runs the job in its own job directory with the same
// -working-directory, where they exist no more, and names the kernels as
// the client does. A front end without that rewrite stays local; so does
// any action that runs in a directory of its own without it. What is
// named by an absolute path keeps inode names, which differ on a worker:
// a host front end of a source so named stays local, and Run checks the
// rest (see openmp.go).
func (c *Client) Accepts(a *actions.Action) bool {
	if len(a.Command) < 2 || a.Run != nil || a.Expand != nil || a.UnknownReads != "" || len(a.Env) > 0 {
		return false
	}
	if a.Dir != "" && stableWorkDir(a) == "" {
		return false // its relative paths depend on a directory no job has
	}
	if c.nvptx(a) {
		// Its build runs ptxas: find the identity of the toolkit on
		// PATH meanwhile, which takes tens of milliseconds.
		if d := c.pathKit(); d != "" {
			c.cudaKit(d)
		}
	}
	if isCUDATool(filepath.Base(a.Command[0])) {
		return c.acceptsCUDA(a)
	}
	switch a.Kind {
	case actions.Backend, actions.DeviceLink:
	case actions.DeviceCompile, actions.Compile, actions.HostFrontend:
		// Compiles from source of HIP, CUDA and SYCL, both sides, and
		// OpenMP front ends with stable kernel names; not plain compiles.
		switch a.Offload {
		case actions.HIP, actions.CUDA, actions.SYCL:
		case actions.OpenMP:
			if !isOpenMPFrontEnd(a) || stableWorkDir(a) == "" {
				return false
			}
			if a.Kind == actions.HostFrontend && filepath.IsAbs(a.Command[len(a.Command)-1]) {
				// A source named by an absolute path (outside
				// OFFCC_BASE_DIR) names its kernels after its inode:
				// the worker's result would come back unused.
				return false
			}
		default:
			return false
		}
	default:
		return false
	}
	if filepath.Dir(a.Command[0]) != c.toolDir {
		return false
	}
	switch toolchain.ToolName(a.Command[0]) {
	case "clang":
		if a.Command[1] != "-cc1" {
			return false
		}
	case "lld":
		if a.DepFile != "" {
			return false
		}
	default:
		return false
	}
	for _, f := range a.AllInputs() {
		if f.IsStdin() {
			return false
		}
	}
	return true
}

// Run sends a to a worker and waits for its result; see actions.Remote.
func (c *Client) Run(ctx context.Context, a *actions.Action, stdout, stderr io.Writer) (actions.RemoteInfo, error) {
	var info actions.RemoteInfo
	local := func(format string, args ...any) (actions.RemoteInfo, error) {
		return info, fmt.Errorf("%w: %s", actions.ErrRunLocally, fmt.Sprintf(format, args...))
	}
	c.start()
	if !c.usable() {
		return local("the farm is off")
	}
	if isOpenMPFrontEnd(a) && a.Kind == actions.DeviceCompile {
		// Its kernel names must be those of its host IR. Where the host
		// IR names a kernel after a file's inode (its front end ran
		// here), a worker would name it after its copy's inode, and the
		// host would never launch it.
		if ir := hostIRFile(c.tables.ClangCC1(), a.Command); ir != "" {
			if named, err := c.inodeNamed(ir); err != nil || named {
				return local("the host IR %s names OpenMP kernels after inodes (a target region in a file named by an absolute path), which a worker would name otherwise", ir)
			}
		}
	}
	j, blobs, err := c.job(ctx, a)
	if err != nil {
		return local("%v", err)
	}
	rec, _ := json.Marshal(j)
	je := &cache.Entry{Kind: kindJob, Record: rec, Blobs: blobs}
	if k := c.opt.Keys.SigningKey; k != nil {
		cache.SignEntry(k, jobEntry(j.ID), je)
	}
	sum := jobSum(je)
	t0 := time.Now()
	sent, err := c.store.ReplaceCounted(jobEntry(j.ID), je)
	info.BytesUp = sent
	if err != nil {
		c.fail(err)
		return local("%s", redisstore.Describe(err))
	}
	defer c.cleanup(j.ID)
	c.expire(jobEntry(j.ID))
	bg := context.Background()
	actx, cancel := context.WithTimeout(bg, 2*time.Second)
	q := queueKey(c.store.Prefix(), j.Toolchain)
	entry, err := c.rdb.XAdd(actx, &redis.XAddArgs{Stream: q, Values: map[string]any{"job": j.ID, "kind": j.Kind}}).Result()
	cancel()
	if err != nil {
		c.fail(err)
		return local("%s", redisstore.Describe(err))
	}
	uploaded := time.Now()
	info.Transfer = uploaded.Sub(t0)
	c.mu.Lock()
	c.sent++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.sent--
		c.mu.Unlock()
	}()

	// Wait for the result; take the job back when nobody takes it in
	// time or its worker stops renewing the lease.
	var owner string
	slow, late := c.deadlines(a)
	for {
		if ctx.Err() != nil {
			c.takeBack(q, j.ID, entry)
			if owner != "" && time.Since(t0) >= slow {
				// Raced and beaten by a local run (or the build
				// stopped meanwhile): this worker is slower than
				// this machine, and so are the farm's next jobs.
				c.giveUp(fmt.Sprintf("worker %.40q had job %s for %v, past its deadline of %v, and a local run finished it first", owner, j.ID, time.Since(t0).Round(time.Millisecond), slow))
			}
			return info, ctx.Err()
		}
		wctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		res, err := c.rdb.BLPop(wctx, 500*time.Millisecond, doneKey(c.store.Prefix(), j.ID)).Result()
		cancel()
		if err == nil && len(res) == 2 {
			owner = res[1]
			break
		}
		if err != nil && !errors.Is(err, redis.Nil) && ctx.Err() == nil {
			c.fail(err)
			c.takeBack(q, j.ID, entry)
			return local("%s", redisstore.Describe(err))
		}
		gctx, cancel := context.WithTimeout(bg, time.Second)
		pipe := c.rdb.Pipeline()
		getCmd := pipe.Get(gctx, claimKey(c.store.Prefix(), j.ID))
		ttlCmd := pipe.PTTL(gctx, claimKey(c.store.Prefix(), j.ID))
		pipe.Exec(gctx)
		cancel()
		cur, err := getCmd.Result()
		switch {
		case err == nil && cur != clientOwner:
			// Only a claim a trusted worker signed for this job is
			// waited on: anyone who can write to the server could set
			// the key and renew it for ever.
			w, verr := verifyClaim(c.opt.Keys.Workers, c.opt.Insecure, j.ID, sum, cur)
			if verr != nil {
				c.distrust(j.ID, cur, fmt.Sprintf("job %s is claimed by %.40q, not a trusted worker (%v)", j.ID, w, verr))
				return local("its claim is not a trusted worker's (%v)", verr)
			}
			// A worker's claim is a lease it renews; one that never
			// expires is nobody's to wait for.
			if ttl, terr := ttlCmd.Result(); terr == nil && (ttl < 0 || ttl > 10*time.Minute) {
				c.reject(fmt.Sprintf("job %s is claimed by %.40q without a lease", j.ID, w))
				return local("its claim has no lease")
			}
			owner = w
			if c.opt.NoRace && time.Since(t0) >= late {
				// No local run races it: take it back.
				sctx, cancel := context.WithTimeout(bg, time.Second)
				seizeScript.Run(sctx, c.rdb, []string{claimKey(c.store.Prefix(), j.ID)}, cur, clientOwner, (10 * time.Minute).Milliseconds())
				cancel()
				c.giveUp(fmt.Sprintf("worker %.40q had job %s for %v, past its deadline of %v", owner, j.ID, time.Since(t0).Round(time.Millisecond), late))
				return local("worker %s had it past its deadline of %v", owner, late)
			}
			continue
		case err != nil && !errors.Is(err, redis.Nil):
			c.fail(err)
			c.takeBack(q, j.ID, entry)
			return local("%s", redisstore.Describe(err))
		}
		// Nobody holds the job.
		if owner == "" && time.Since(uploaded) < c.opt.Pickup {
			continue
		}
		// Taken from the stream but never claimed: workers claim what
		// they take at once, so whoever holds it is no worker.
		taker := c.taker(q, entry)
		if c.takeBack(q, j.ID, entry) {
			if owner != "" {
				return local("worker %s stopped answering", owner)
			}
			if taker != "" {
				c.distrust(j.ID, "", fmt.Sprintf("job %s was taken from the queue by %.40q, which never claimed it", j.ID, taker))
				return local("%.40q took it from the queue and never claimed it", taker)
			}
			return local("no worker took it in %v", c.opt.Pickup)
		}
		// A worker claimed it just now: wait for it.
	}
	waited := time.Since(uploaded)
	info.Worker = owner
	t1 := time.Now()
	e, err := c.store.Get(resultEntry(j.ID))
	if err != nil || e.Kind != kindResult {
		return local("the result of worker %s is missing (%v)", owner, err)
	}
	if !c.opt.Insecure {
		if _, err := cache.VerifyEntry(c.opt.Keys.Workers, resultEntry(j.ID), e); err != nil {
			c.reject(fmt.Sprintf("a result from %.40q: %v", owner, err))
			return local("its result is %v", err)
		}
	}
	var res Result
	if err := json.Unmarshal(e.Record, &res); err != nil {
		c.reject(fmt.Sprintf("the result from %.40q does not decode", owner))
		return local("the result of worker %s does not decode", owner)
	}
	if res.Job != j.ID || res.Toolchain != j.Toolchain || res.JobSum != sum {
		c.reject(fmt.Sprintf("worker %.40q answered another job than the one sent", res.Worker))
		return local("the result of worker %s is for another job", res.Worker)
	}
	info.Worker = res.Worker
	info.Run = time.Duration(res.RunMS) * time.Millisecond
	info.Queue = max(0, waited-time.Duration(res.WorkMS)*time.Millisecond)
	info.Transfer += time.Duration(res.FetchMS) * time.Millisecond
	if res.Refused != "" {
		return local("worker %s refused it: %s", res.Worker, res.Refused)
	}
	if res.Code != 0 {
		// A failure here may be the farm's (a file the job did not
		// ship): the client runs the job itself, and its diagnostics are
		// the ones the user sees.
		return local("it failed on worker %s with exit code %d", res.Worker, res.Code)
	}
	if c.opt.Peaks != nil && res.PeakRSS > 0 {
		c.opt.Peaks.Learn(a, res.PeakRSS)
	}
	if c.opt.Peaks != nil && res.RunMS > 0 {
		c.opt.Peaks.LearnTime(a, time.Duration(res.RunMS)*time.Millisecond)
	}
	fetched, err := c.fetchOutputs(j, e)
	defer fetched.discard()
	if err != nil {
		return local("worker %s: %v", res.Worker, err)
	}
	if isOpenMPFrontEnd(a) {
		if out := c.inodeNamedOutput(a, fetched.targets, fetched.tmps); out != "" {
			return local("its output %s from worker %s names OpenMP kernels after a file's inode (a target region in a file named by an absolute path), which differs from the client's", out, res.Worker)
		}
	}
	if ctx.Err() != nil {
		// A local run of a raced this one and won: its outputs stay.
		return info, ctx.Err()
	}
	if err := fetched.commit(); err != nil {
		return local("worker %s: %v", res.Worker, err)
	}
	for _, b := range e.Blobs {
		info.BytesDown += b.Size
	}
	info.Transfer += time.Since(t1)
	stdout.Write(res.Stdout)
	stderr.Write(res.Stderr)
	return info, nil
}

// distrust answers a job that someone other than a trusted worker holds
// (its claim value cur, "" for none): the client takes the job back
// from whoever holds it, counts a rejection, and gives the farm up for
// the rest of the process with one warning, so that such a writer slows
// a build by the time it takes to notice, once (see docs/farm.md).
func (c *Client) distrust(id, cur, why string) {
	if cur != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		seizeScript.Run(ctx, c.rdb, []string{claimKey(c.store.Prefix(), id)}, cur, clientOwner, (10 * time.Minute).Milliseconds())
		cancel()
	}
	c.rejected.Add(1)
	c.giveUp(why)
}

// giveUp turns the farm off for the rest of the process, warning once
// with why.
func (c *Client) giveUp(why string) {
	c.mu.Lock()
	c.failed = true
	c.slots = 0
	warn := !c.warned && c.opt.Warn != nil
	c.warned = true
	c.mu.Unlock()
	if warn {
		c.opt.Warn(fmt.Sprintf("build farm %s: %s; running every job locally", c.store.Name(), why))
	}
}

// seizeScript replaces a claim that is still ARGV[1] by ARGV[2] with a
// lease of ARGV[3] milliseconds: 1 if it did.
var seizeScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3]) return 1 else return 0 end`)

// taker returns the consumer the job's entry in stream q was delivered
// to, "" when it was delivered to none (or the server cannot say).
func (c *Client) taker(q, entry string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p, err := c.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: q,
		Group: Group, Start: entry, End: entry, Count: 1}).Result()
	if err != nil || len(p) == 0 {
		return ""
	}
	return p[0].Consumer
}

// Deadlines returns, for a remote run of a, after how long it counts as
// slow (a local slot with nothing else to do then races it) and when it
// is late (it is then run locally as well, whatever else waits): the
// pickup time, then twice and four times the time a is expected to run
// (learned as its peak is, from its earlier runs here and on workers),
// with a margin for the transfers; without a learned time, 5 s and 30 s.
// Whichever run ends first is the action's.
func (c *Client) Deadlines(a *actions.Action) (slow, deadline time.Duration) {
	if c.opt.NoRace {
		return 0, 0
	}
	return c.deadlines(a)
}

// deadlines are Deadlines whether or not races are on.
func (c *Client) deadlines(a *actions.Action) (slow, deadline time.Duration) {
	var exp time.Duration
	if c.opt.Peaks != nil {
		exp = c.opt.Peaks.ExpectTime(a)
	}
	if exp <= 0 {
		return c.opt.Pickup + 5*time.Second, c.opt.Pickup + 30*time.Second
	}
	return c.opt.Pickup + 2*exp + time.Second, c.opt.Pickup + 4*exp + 5*time.Second
}

// takeBack claims a job for its client; it reports whether the client now
// owns it (no worker does). A job nobody took leaves its stream, q.
func (c *Client) takeBack(q, id, entry string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ok, err := c.rdb.SetNX(ctx, claimKey(c.store.Prefix(), id), clientOwner, 10*time.Minute).Result()
	if err != nil {
		return true // the server is gone: so are the workers' results
	}
	if ok {
		c.rdb.XDel(ctx, q, entry)
		return true
	}
	cur, err := c.rdb.Get(ctx, claimKey(c.store.Prefix(), id)).Result()
	return err != nil || cur == clientOwner
}

// cleanup removes a job's records (the blobs stay, shared with the cache).
func (c *Client) cleanup(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.rdb.Del(ctx, c.store.Prefix()+"e:"+jobEntry(id).String(), c.store.Prefix()+"e:"+resultEntry(id).String(),
		doneKey(c.store.Prefix(), id))
	c.rdb.Expire(ctx, claimKey(c.store.Prefix(), id), time.Minute)
}

// expire bounds how long a record can outlive a client that died.
func (c *Client) expire(key cache.Sum) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.rdb.Expire(ctx, c.store.Prefix()+"e:"+key.String(), time.Hour)
}

// fetchedOutputs are a job's outputs fetched beside their targets, not
// yet renamed into place.
type fetchedOutputs struct {
	tmps, targets []string
}

// fetchOutputs fetches every output of a job from its result entry, each
// verified, into a temporary file beside its target. A damaged blob
// leaves nothing fetched (and every damaged blob is removed from Redis).
func (c *Client) fetchOutputs(j *Job, e *cache.Entry) (*fetchedOutputs, error) {
	blobs := map[string]cache.Blob{}
	for _, b := range e.Blobs {
		blobs[b.Name] = b
	}
	f := &fetchedOutputs{}
	var firstErr error
	for i, o := range j.Outputs {
		b, ok := blobs[fmt.Sprintf("o%d", i)]
		if !ok {
			continue // not written by the tool
		}
		path := o
		if !filepath.IsAbs(path) {
			path = filepath.Join(c.cwd, path)
		}
		tmp := fmt.Sprintf("%s.offcc-farm-%s", path, j.ID[:8])
		if err := cache.WriteBlob(c.store, b, tmp); err != nil {
			os.Remove(tmp)
			if firstErr == nil {
				firstErr = fmt.Errorf("output %s: %v", o, err)
			}
			continue
		}
		f.tmps = append(f.tmps, tmp)
		f.targets = append(f.targets, path)
	}
	if firstErr != nil {
		f.discard()
		return f, firstErr
	}
	return f, nil
}

// commit renames the fetched outputs into place; on failure it removes
// the ones already renamed.
func (f *fetchedOutputs) commit() error {
	for i, tmp := range f.tmps {
		if err := os.Rename(tmp, f.targets[i]); err != nil {
			for _, p := range f.targets[:i] {
				os.Remove(p)
			}
			return err
		}
	}
	f.tmps = nil
	return nil
}

// discard removes what was fetched and not committed.
func (f *fetchedOutputs) discard() {
	for _, t := range f.tmps {
		os.Remove(t)
	}
	f.tmps = nil
}

// job describes a as a job: its tool, arguments, the files it reads
// (for a compile with a dependency file, the files a local dependency
// scan lists) and its outputs.
func (c *Client) job(ctx context.Context, a *actions.Action) (*Job, []cache.Blob, error) {
	var rnd [12]byte
	rand.Read(rnd[:])
	tool := toolchain.ToolName(a.Command[0])
	j := &Job{Version: JobVersion, ID: hex.EncodeToString(rnd[:]), Toolchain: c.toolchain, Tool: tool,
		ToolID: c.toolIDs[tool], Args: a.Command[1:], Dir: c.cwd, Kind: a.Kind.String(), Client: c.host,
		Expires: time.Now().Add(jobLife).UnixMilli()}
	if isCUDATool(tool) {
		tool = filepath.Base(a.Command[0])
		k := c.cudaKit(filepath.Dir(a.Command[0]))
		if !k.ready() {
			return nil, nil, errors.New("the CUDA toolkit's identity is not known yet")
		}
		j.Tool, j.Toolchain, j.ToolID = tool, k.toolchain, k.ids[tool]
	}
	if c.opt.Peaks != nil {
		j.Peak = c.opt.Peaks.Expect(a)
	}
	if tool == "lld" && len(j.Args) >= 2 && j.Args[0] == "-flavor" && j.Args[1] == "gnu" {
		// Workers run ld.lld, lld's ELF driver by name, and refuse
		// any -flavor: the one clang gives device links goes.
		j.Args = j.Args[2:]
	}
	if w := stableWorkDir(a); w != "" {
		// The worker gives clang its own -working-directory, the job's
		// directory: W (the client's, or OFFCC_BASE_DIR), which the
		// command's relative paths and the files clang lists are
		// relative to.
		m := len(j.Args)
		j.Args = append(slices.Clone(j.Args[:m-5]), j.Args[m-3:]...)
		j.Dir = w
	}
	for _, o := range a.Outputs {
		j.Outputs = append(j.Outputs, o.Path)
	}
	if a.DepFile != "" && !slices.Contains(j.Outputs, a.DepFile) {
		j.Outputs = append(j.Outputs, a.DepFile)
	}
	var reads []string
	seen := map[string]bool{}
	// add ships the file p, relative to dir unless absolute, that the
	// tool names arg.
	add := func(dir, p, arg string) {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, abs)
		}
		abs = filepath.Clean(abs)
		if seen[abs] {
			return
		}
		seen[abs] = true
		reads = append(reads, abs)
		f := File{Path: abs}
		if (tool == "lld" || isCUDATool(tool)) && arg != abs {
			f.Arg = arg
		}
		j.Files = append(j.Files, f)
	}
	// The action's files are named relative to offcc's directory.
	for _, f := range a.AllInputs() {
		add(c.cwd, f.Path, f.Path)
	}
	// An empty input clang is given as /dev/null (-fembed-offload-object=
	// /dev/null, which offcc fills later) goes as an empty file.
	for _, arg := range j.Args {
		if p, ok := pathOf(c.tables.ClangCC1(), arg); ok && p == os.DevNull && tool == "clang" {
			add(c.cwd, p, p)
		}
	}
	if tool == "clang" && a.DepFile != "" {
		// A superset of the files the compile can read, found in process;
		// where that cannot be promised (a computed #include), the files
		// clang's own preprocessor pass lists. Both name them relative to
		// clang's working directory, the job's.
		deps, ok, _ := c.includes.Scan(j.Args, j.Dir)
		if !ok {
			var err error
			if deps, err = c.scan(ctx, a); err != nil {
				return nil, nil, err
			}
		}
		for _, d := range deps {
			add(j.Dir, d, d)
		}
	}
	var blobs []cache.Blob
	for i := range j.Files {
		b, err := c.blobOf(reads[i], fmt.Sprintf("f%d", i))
		if err != nil {
			return nil, nil, err
		}
		j.Files[i].Blob, j.Files[i].Mode = b.Name, b.Mode
		blobs = append(blobs, b)
	}
	if _, why := check(j, c.tables); why != "" {
		return nil, nil, errors.New(why)
	}
	return j, blobs, nil
}

// memoBlob is a file's blob and the stat it was computed under.
type memoBlob struct {
	size  int64
	mtime time.Time
	blob  cache.Blob
}

// blobOf is blobOf memoised by path, size and modification time: the
// headers of a project are hashed once per build, not once per job.
func (c *Client) blobOf(path, name string) (cache.Blob, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return cache.Blob{}, err
	}
	if m, ok := c.digests.Load(path); ok {
		if mb := m.(memoBlob); mb.size == fi.Size() && mb.mtime.Equal(fi.ModTime()) && fi.Mode().IsRegular() {
			b := mb.blob
			b.Name = name
			return b, nil
		}
	}
	b, err := blobOf(path, name)
	if err != nil {
		return b, err
	}
	if fi.Mode().IsRegular() {
		c.digests.Store(path, memoBlob{size: fi.Size(), mtime: fi.ModTime(), blob: b})
	}
	return b, nil
}

// scan lists the files a compile reads (where includescan.Scanner cannot): its
// command run here as a preprocessor pass that writes only a dependency
// file (system headers included). Relative names are relative to the
// command's -working-directory, if it has one, else to offcc's directory.
func (c *Client) scan(ctx context.Context, a *actions.Action) ([]string, error) {
	f, err := os.CreateTemp(c.opt.TempDir, "farm-scan-*.d")
	if err != nil {
		return nil, err
	}
	f.Close()
	defer os.Remove(f.Name())
	args := append(withoutAction(c.tables.ClangCC1(), a.Command[1:]), "-Eonly", "-dependency-file", f.Name(), "-MT", "scan", "-sys-header-deps")
	sh := c.opt.Shell
	if sh == nil {
		sh = actions.NewShell(actions.ShellOptions{TempDir: c.opt.TempDir})
	}
	var out bytes.Buffer
	err = sh.Run(ctx, &actions.Cmd{
		Argv: append([]string{a.Command[0]}, args...), Env: []string{"TMPDIR=" + c.opt.TempDir},
		Stdout: &out, Stderr: &out,
	})
	if err != nil {
		first, _, _ := strings.Cut(out.String(), "\n")
		return nil, fmt.Errorf("dependency scan failed: %v: %s", err, first)
	}
	return actions.ReadDepFile(f.Name())
}

// withoutAction returns the cc1 arguments args ("-cc1" first) without
// their action (-emit-obj, -emit-llvm-bc...: clang refuses some of them
// beside -Eonly), read with cc1, the option table of their clang, or a
// copy of args where they do not parse.
func withoutAction(cc1 *options.Table, args []string) []string {
	out := []string{}
	if len(args) < 1 {
		return out
	}
	parsed, err := cc1.Parse(args[1:])
	if err != nil {
		return append(out, args...)
	}
	out = append(out, args[0])
	for _, a := range parsed {
		if !a.IsUnknown() && a.Option.InGroup("Action_Group") {
			continue
		}
		out = append(out, a.Words(args[1:])...)
	}
	return out
}
