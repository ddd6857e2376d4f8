package farm

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/offcc/offcc/cache/redisstore"
	"github.com/redis/go-redis/v9"
)

// Status is the farm as "offcc worker status" shows it.
type Status struct {
	Server  string       `json:"server"`
	Workers []WorkerInfo `json:"workers"`
	// Queues are the job streams, one per toolchain.
	Queues []Queue `json:"queues"`
}

// Queue is one toolchain's job stream.
type Queue struct {
	Toolchain string `json:"toolchain"`
	// Queued jobs wait for a worker; Running ones are held by a worker.
	Queued  int64 `json:"queued"`
	Running int64 `json:"running"`
}

// GetStatus reads the farm's workers (live ones; dead registrations are
// removed) and queues.
func GetStatus(ctx context.Context, store *redisstore.Store) (*Status, error) {
	rdb := store.Client()
	p := store.Prefix()
	st := &Status{Server: store.Name(), Workers: []WorkerInfo{}, Queues: []Queue{}}
	all, err := rdb.HGetAll(ctx, workersKey(p)).Result()
	if err != nil {
		return nil, fmt.Errorf("build farm %s: %s", store.Name(), redisstore.Describe(err))
	}
	now := time.Now()
	for name, v := range all {
		var w WorkerInfo
		if json.Unmarshal([]byte(v), &w) != nil || now.Sub(time.UnixMilli(w.Seen)) > 10*deadAfter {
			rdb.HDel(ctx, workersKey(p), name)
			continue
		}
		if now.Sub(time.UnixMilli(w.Seen)) < deadAfter {
			st.Workers = append(st.Workers, w)
		}
	}
	sort.Slice(st.Workers, func(i, j int) bool { return st.Workers[i].Name < st.Workers[j].Name })
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(ctx, cursor, p+"farm:q:*", 100).Result()
		if err != nil {
			return nil, fmt.Errorf("build farm %s: %s", store.Name(), redisstore.Describe(err))
		}
		for _, k := range keys {
			q := Queue{Toolchain: strings.TrimPrefix(k, p+"farm:q:")}
			q.Queued, _ = rdb.XLen(ctx, k).Result()
			if pend, err := rdb.XPending(ctx, k, Group).Result(); err == nil {
				q.Running = pend.Count
			} else if err != redis.Nil && !strings.Contains(err.Error(), "NOGROUP") {
				return nil, fmt.Errorf("build farm %s: %s", store.Name(), redisstore.Describe(err))
			}
			q.Queued -= q.Running
			st.Queues = append(st.Queues, q)
		}
		if next == 0 {
			break
		}
		cursor = next
	}
	sort.Slice(st.Queues, func(i, j int) bool { return st.Queues[i].Toolchain < st.Queues[j].Toolchain })
	return st, nil
}
