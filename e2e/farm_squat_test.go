package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/farm"
	"github.com/offcc/offcc/trust"
)

// holder is a fake worker named name that registers with many slots,
// takes every job of a toolchain from the stream and, when claim is not
// nil, claims it with claim(job ID, job entry digest) and a short lease
// that it renews every second whatever the client does, for as long as
// the test runs. It never answers.
func holder(t *testing.T, url, toolchain, name string, claim func(id, sum string) string) {
	t.Helper()
	jobs := newFarmJobs(t, url, toolchain)
	rdb, store := jobs.rdb, jobs.store
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	q := "offcc:farm:q:" + toolchain
	rdb.XGroupCreateMkStream(ctx, q, farm.Group, "0")
	wg.Add(1)
	go func() {
		defer wg.Done()
		held := map[string]string{}
		last := time.Now()
		for ctx.Err() == nil {
			info, _ := json.Marshal(farm.WorkerInfo{Name: name, Host: name, Toolchain: toolchain, Slots: 8,
				Sandbox: []string{"bubblewrap"}, Seen: time.Now().UnixMilli(), Started: time.Now().UnixMilli()})
			rdb.HSet(ctx, "offcc:farm:workers", name, info)
			if time.Since(last) >= time.Second {
				for k, v := range held {
					rdb.Set(ctx, k, v, 3*time.Second)
				}
				last = time.Now()
			}
			res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: farm.Group, Consumer: name, Streams: []string{q, ">"}, Count: 8, Block: 200 * time.Millisecond}).Result()
			if err != nil || claim == nil {
				continue
			}
			for _, s := range res {
				for _, m := range s.Messages {
					id, _ := m.Values["job"].(string)
					je, err := store.Get(farmJobKey(id))
					if err != nil {
						continue
					}
					v := claim(id, cache.SumBytes(cache.EncodeIndex(je)).String())
					k := "offcc:farm:claim:" + id
					if ok, _ := rdb.SetNX(ctx, k, v, 3*time.Second).Result(); ok {
						held[k] = v
					}
				}
			}
		}
	}()
}

// squatter is an outsider's fake worker, with no key: a holder that
// claims with its bare name when claims is set.
func squatter(t *testing.T, url, toolchain string, claims bool) {
	t.Helper()
	var claim func(id, sum string) string
	if claims {
		claim = func(string, string) string { return "squatter" }
	}
	holder(t, url, toolchain, "squatter", claim)
}

// heldBuild returns what the tests of workers that hold jobs build: the
// compiler, the toolchain identity, a 2-arch HIP compile's arguments (no
// output named), its local object, and the wall time of its local build,
// measured here beside the farm builds.
func heldBuild(t *testing.T) (c compiler, toolchain string, a []string, want []byte, localTime time.Duration) {
	t.Helper()
	c = offccOnly(t, "the build farm is offcc's")
	toolchain = farm.Toolchain(filepath.Join(llvmBin, "clang"))
	a = args(farmHIPFlags(t, "gfx906,gfx90a"), "-c", srcPath(t, "../hip/kernels.hip"))
	want = localObject(t, c, a...)
	local := newFarmBuild(t, c, "", nil, append(a, "-o", "k.o")...)
	t0 := time.Now()
	local.mustRun(t, c)
	return c, toolchain, a, want, time.Since(t0)
}

// TestFarmSquatter: an outsider who can write to Redis but holds no key
// registers a fake worker that takes a real build's jobs and holds them
// for ever (claimed and renewed every second, or never claimed). The
// build ends within docs/farm.md's bound of a local build's time (under a
// second to notice a claim no trusted worker signed, the pickup time, 2 s,
// for a job taken and never claimed; here with 3 s to spare for a loaded
// machine), its object is the local build's, and it warns once.
func TestFarmSquatter(t *testing.T) {
	t.Parallel()
	c, toolchain, a, want, localTime := heldBuild(t)
	for _, tc := range []struct {
		name   string
		claims bool
		bound  time.Duration
	}{
		{"claims-and-renews", true, time.Second},
		{"takes-and-never-claims", false, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			squatter(t, srv.URL, toolchain, tc.claims)
			waitWorkers(t, c, srv.URL, "squatter")
			b := newFarmBuild(t, c, srv.URL, nil, append(a, "-o", "k.o")...)
			t1 := time.Now()
			r := b.mustRun(t, c)
			took := time.Since(t1)
			sameBytes(t, "the object built beside a squatter", b.obj(), want)
			if limit := localTime + tc.bound + 3*time.Second; took > limit {
				t.Errorf("the build took %v beside the squatter, the local one %v: more than the bound (%v) allows", took, localTime, tc.bound)
			}
			if remote := remoteLines(r.stderr); len(remote) != 0 {
				t.Errorf("jobs count as run on a worker: %q", remote)
			}
			if n := strings.Count(r.stderr, "offcc: warning: build farm"); n != 1 {
				t.Errorf("want one warning, got %d:\n%s", n, r.stderr)
			}
			t.Logf("local %v, beside the squatter %v", localTime, took)
		})
	}
}

// stuckWorker is a fake worker that holds the trusted worker key (a
// worker host gone wrong): a holder whose claims the clients believe, as
// a real worker signs them (farm/claim.go).
func stuckWorker(t *testing.T, url, toolchain string, key *trust.PrivateKey) {
	t.Helper()
	holder(t, url, toolchain, "stuck", func(id, sum string) string {
		sig := key.Sign("farm-claim", []byte(id+"\x00"+sum+"\x00stuck"))
		return "stuck " + sig.Key + " " + base64.RawStdEncoding.EncodeToString(sig.Sig)
	})
}

// TestFarmStuckTrustedWorker: a worker the client trusts takes a real
// build's jobs, claims them as it should and never answers. The client
// races each job locally once it is slow (the pickup time and 5 s for a
// job whose run time it has not learned) with its local slots idle, the
// local runs win, the farm is given up for the rest of the process (one
// warning), and the build ends with the local object: a stuck worker
// costs a bounded time, once, not the build.
func TestFarmStuckTrustedWorker(t *testing.T) {
	t.Parallel()
	c, toolchain, a, want, localTime := heldBuild(t)
	srv := redistest.Start(t)
	stuckWorker(t, srv.URL, toolchain, farmKeys(t).key(t, "worker"))
	waitWorkers(t, c, srv.URL, "stuck")
	b := newFarmBuild(t, c, srv.URL, nil, append(a, "-o", "k.o")...)
	t1 := time.Now()
	r := b.mustRun(t, c)
	took := time.Since(t1)
	sameBytes(t, "the object built beside a stuck worker", b.obj(), want)
	const slow = 2*time.Second + 5*time.Second
	if limit := localTime + slow + 5*time.Second; took > limit {
		t.Errorf("the build took %v beside a stuck worker, the local one %v: more than the pickup time and the slow deadline allow (%v)", took, localTime, limit)
	}
	if n := strings.Count(r.stderr, "offcc: warning: build farm"); n != 1 {
		t.Errorf("want one warning that the farm is given up, got %d:\n%s", n, r.stderr)
	}
	if !strings.Contains(r.stderr, "raced=local") {
		t.Errorf("no job was raced locally:\n%s", r.stderr)
	}
	if remote := remoteLines(r.stderr); len(remote) != 0 {
		t.Errorf("jobs count as run on the stuck worker: %q", remote)
	}
	t.Logf("local %v, beside a stuck worker %v", localTime, took)
}
