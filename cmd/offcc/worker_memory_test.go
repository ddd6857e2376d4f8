package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/farm"
)

// TestWorkerStatusMemory: offcc worker status shows each worker's memory,
// what its running jobs are expected to take of it and where it comes
// from, in text and JSON; --memory must be a size.
func TestWorkerStatusMemory(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := workerRun(context.Background(), []string{"--redis", "redis://127.0.0.1:1", "--memory", "lots"}, func(string) string { return "" }, &stdout, &stderr); code != 1 ||
		strings.TrimSpace(stderr.String()) != "offcc: error: worker: --memory lots: want a size of at least 64M, such as 16G" {
		t.Errorf("--memory lots: exit %d, stderr %q", code, stderr.String())
	}

	srv := redistest.Start(t)
	store, err := redisstore.Open(srv.URL, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	info, _ := json.Marshal(farm.WorkerInfo{Name: "big", Toolchain: "0123456789abcdef", Slots: 4, Running: 1,
		Memory: 16 << 30, MemorySource: "--memory", Reserved: 300 << 20, Seen: time.Now().Add(time.Hour).UnixMilli()})
	store.Client().HSet(context.Background(), store.Prefix()+"farm:workers", "big", info)

	stdout.Reset()
	stderr.Reset()
	if code := workerRun(context.Background(), []string{"status", "--redis", srv.URL}, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("status: exit %d, %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "MEMORY") || !strings.Contains(out, "300.0 MiB/16.0 GiB (--memory)") {
		t.Errorf("status lacks the worker's memory:\n%s", out)
	}
	stdout.Reset()
	if code := workerRun(context.Background(), []string{"status", "--redis", srv.URL, "--json"}, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("status --json: exit %d, %s", code, stderr.String())
	}
	var st farm.Status
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil || len(st.Workers) != 1 || st.Workers[0].Memory != 16<<30 || st.Workers[0].Reserved != 300<<20 {
		t.Errorf("status --json: %v\n%s", err, stdout.String())
	}
}
