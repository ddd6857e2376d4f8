package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/farm"
)

// squatter is an outsider's fake worker, with no key: it registers with
// many slots, takes every job of a toolchain from the stream and, when
// claims is set, claims it with its name and a short lease that it renews
// every second, for as long as the test runs. It never answers.
func squatter(t *testing.T, url, toolchain string, claims bool) {
	t.Helper()
	jobs := newFarmJobs(t, url, toolchain)
	rdb := jobs.rdb
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	q := "offcc:farm:q:" + toolchain
	rdb.XGroupCreateMkStream(ctx, q, farm.Group, "0")
	wg.Add(1)
	go func() {
		defer wg.Done()
		var held []string
		last := time.Now()
		for ctx.Err() == nil {
			info, _ := json.Marshal(farm.WorkerInfo{Name: "squatter", Host: "squat", Toolchain: toolchain, Slots: 8,
				Sandbox: []string{"bubblewrap"}, Seen: time.Now().UnixMilli(), Started: time.Now().UnixMilli()})
			rdb.HSet(ctx, "offcc:farm:workers", "squatter", info)
			if time.Since(last) >= time.Second {
				for _, k := range held {
					rdb.Set(ctx, k, "squatter", 3*time.Second)
				}
				last = time.Now()
			}
			res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: farm.Group, Consumer: "squatter", Streams: []string{q, ">"}, Count: 8, Block: 200 * time.Millisecond}).Result()
			if err != nil || !claims {
				continue
			}
			for _, s := range res {
				for _, m := range s.Messages {
					id, _ := m.Values["job"].(string)
					k := "offcc:farm:claim:" + id
					if ok, _ := rdb.SetNX(ctx, k, "squatter", 3*time.Second).Result(); ok {
						held = append(held, k)
					}
				}
			}
		}
	}()
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
	c := offccOnly(t, "the build farm is offcc's")
	toolchain := farm.Toolchain(filepath.Join(llvmBin, "clang"))
	a := args(farmHIPFlags(t, "gfx906,gfx90a"), "-c", srcPath(t, "../hip/kernels.hip"))
	want := localObject(t, c, a...)
	// The local build's time, measured here beside the others.
	local := newFarmBuild(t, c, "", nil, append(a, "-o", "k.o")...)
	t0 := time.Now()
	local.mustRun(t, c)
	localTime := time.Since(t0)
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
