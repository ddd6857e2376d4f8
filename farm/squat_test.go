package farm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/trust"
	"github.com/redis/go-redis/v9"
)

// squat registers a fake worker that takes every job of toolchain from
// the stream and, with claim not nil, claims it with claim(id, sum) and
// renews that lease every 300 ms while it holds it, never answering.
func squat(t *testing.T, store *redisstore.Store, toolchain string, claim func(id, sum string) string) {
	t.Helper()
	rdb := store.Client()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	q := queueKey(store.Prefix(), toolchain)
	rdb.XGroupCreateMkStream(ctx, q, Group, "0")
	wg.Add(1)
	go func() {
		defer wg.Done()
		held := map[string]string{}
		for ctx.Err() == nil {
			info, _ := json.Marshal(WorkerInfo{Name: "squatter", Toolchain: toolchain, Slots: 4, Seen: time.Now().UnixMilli()})
			rdb.HSet(ctx, workersKey(store.Prefix()), "squatter", info)
			for k, v := range held {
				// Renewed as a worker renews a lease: while it is its own.
				renewScript.Run(ctx, rdb, []string{k}, v, 2000)
			}
			res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: Group, Consumer: "squatter", Streams: []string{q, ">"}, Count: 1, Block: 300 * time.Millisecond}).Result()
			if err != nil || claim == nil {
				continue
			}
			for _, s := range res {
				for _, m := range s.Messages {
					id, _ := m.Values["job"].(string)
					sum := ""
					if je, err := store.Get(jobEntry(id)); err == nil {
						sum = jobSum(je)
					}
					k := claimKey(store.Prefix(), id)
					held[k] = claim(id, sum)
					rdb.SetNX(ctx, k, held[k], 2*time.Second)
				}
			}
		}
	}()
}

// TestClientLeavesSquatters: a fake worker without the trusted worker key
// that takes a build's job from the stream and holds it (claimed with
// its name, claimed with a key nobody trusts, or never claimed) delays
// the job by at most the time it takes to notice: under a second for a
// claim, the pickup time for none. The job runs locally, and the client
// gives the farm up for the rest of the process, with one warning.
func TestClientLeavesSquatters(t *testing.T) {
	attacker, _ := trust.Generate("attacker")
	const pickup = 2 * time.Second
	for _, tc := range []struct {
		name  string
		claim func(id, sum string) string
		bound time.Duration
	}{
		{"unsigned-claim", func(string, string) string { return "squatter" }, 1500 * time.Millisecond},
		{"claim-signed-by-an-untrusted-key", func(id, sum string) string { return makeClaim(attacker, id, sum, "squatter") }, 1500 * time.Millisecond},
		{"never-claimed", nil, pickup + 1500*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, store, clang := farmSetup(t)
			var warnings []string
			var mu sync.Mutex
			c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir(), Pickup: pickup,
				Warn: func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() }})
			squat(t, store, c.Toolchain(), tc.claim)
			c.refresh()
			waitSlots(t, c, 1)
			dir := t.TempDir()
			a := deviceCompile(t, clang, dir, filepath.Join(dir, "k.o"))
			start := time.Now()
			_, err := c.Run(context.Background(), a, new(bytes.Buffer), new(bytes.Buffer))
			took := time.Since(start)
			if !errors.Is(err, actions.ErrRunLocally) {
				t.Fatalf("Run = %v, want ErrRunLocally", err)
			}
			if took > tc.bound {
				t.Errorf("the squatter held the job for %v, more than the bound %v", took, tc.bound)
			}
			if n := c.Slots(); n != 0 {
				t.Errorf("after a squatter the client still offers %d farm slots", n)
			}
			if c.Rejected() != 1 {
				t.Errorf("rejected %d, want 1", c.Rejected())
			}
			// The job is the client's now: the squatter's claim is gone.
			v, _ := store.Client().Get(context.Background(), claimKey(store.Prefix(), jobIDs(t, store)[0])).Result()
			if tc.claim != nil && v != clientOwner {
				t.Errorf("the claim is %q after the client took the job back, want %q", v, clientOwner)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(warnings) != 1 || !strings.Contains(warnings[0], "running every job locally") {
				t.Errorf("want one warning that the farm is given up, got %q", warnings)
			}
		})
	}
}

// jobIDs returns the IDs of the jobs with a claim key.
func jobIDs(t *testing.T, store *redisstore.Store) []string {
	t.Helper()
	keys, _ := store.Client().Keys(context.Background(), claimKey(store.Prefix(), "*")).Result()
	var ids []string
	for _, k := range keys {
		ids = append(ids, strings.TrimPrefix(k, claimKey(store.Prefix(), "")))
	}
	if len(ids) == 0 {
		return []string{"none"}
	}
	return ids
}

// TestClientTakesBackLateJobs: with races off (OFFCC_REMOTE_EXEC_RACE=0),
// a job that a trusted worker claims and never finishes is taken back
// when it is late (the pickup time, four times its expected run time and
// 5 s): the claim becomes the client's, so the worker's next renewal
// fails, and the farm is given up for the process.
func TestClientTakesBackLateJobs(t *testing.T) {
	_, store, clang := farmSetup(t)
	peaks := &fakePeaks{learned: map[*actions.Action]int64{}, expectT: 10 * time.Millisecond}
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir(), Pickup: 500 * time.Millisecond, NoRace: true, Peaks: peaks})
	if slow, late := c.Deadlines(nil); slow != 0 || late != 0 {
		t.Errorf("Deadlines with races off = %v, %v, want none", slow, late)
	}
	wk := testKeys().worker.SigningKey
	squat(t, store, c.Toolchain(), func(id, sum string) string { return makeClaim(wk, id, sum, "stuck") })
	c.refresh()
	waitSlots(t, c, 1)
	dir := t.TempDir()
	a := deviceCompile(t, clang, dir, filepath.Join(dir, "k.o"))
	_, late := c.deadlines(a)
	start := time.Now()
	_, err := c.Run(context.Background(), a, new(bytes.Buffer), new(bytes.Buffer))
	took := time.Since(start)
	if !errors.Is(err, actions.ErrRunLocally) || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("Run = %v, want ErrRunLocally past its deadline", err)
	}
	if took < late || took > late+1500*time.Millisecond {
		t.Errorf("taken back after %v, want just past its deadline %v", took, late)
	}
	if v, _ := store.Client().Get(context.Background(), claimKey(store.Prefix(), jobIDs(t, store)[0])).Result(); v != clientOwner {
		t.Errorf("the claim is %q after the client took the job back, want %q", v, clientOwner)
	}
	if n := c.Slots(); n != 0 {
		t.Errorf("after a late job the client still offers %d farm slots", n)
	}
}
