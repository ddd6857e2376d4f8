package farm

import (
	"strings"
	"testing"
	"time"
)

// TestExpiryProblem: a job runs only between now and maxJobLife ahead.
func TestExpiryProblem(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	for _, tc := range []struct {
		name    string
		expires int64
		want    string // in the problem; "" for none
	}{
		{"none", 0, "no expiry"},
		{"negative", -5, "no expiry"},
		{"expired a second ago", now.Add(-time.Second).UnixMilli(), "expired 1s ago"},
		{"expires now", now.UnixMilli(), "expired"},
		{"a millisecond ahead", now.UnixMilli() + 1, ""},
		{"the client's hour", now.Add(jobLife).UnixMilli(), ""},
		{"the most a worker accepts", now.Add(maxJobLife).UnixMilli(), ""},
		{"past it", now.Add(maxJobLife).UnixMilli() + 1, "more than the 1h5m0s a worker accepts"},
		{"a year ahead", now.Add(365 * 24 * time.Hour).UnixMilli(), "a worker accepts"},
	} {
		got := expiryProblem(tc.expires, now)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSeenJobs: a job ID runs once before its expiry, again after it
// (when its record can no longer be accepted anyway); expired IDs are
// forgotten, and a full set refuses new jobs without calling them
// replays.
func TestSeenJobs(t *testing.T) {
	var s seenJobs
	now := time.UnixMilli(1_700_000_000_000)
	exp := now.Add(time.Hour).UnixMilli()
	if why, _ := s.add("a", exp, now); why != "" {
		t.Fatalf("first run of a: %q", why)
	}
	if why, replay := s.add("a", exp, now.Add(time.Minute)); !replay || !strings.Contains(why, "already ran") {
		t.Errorf("a again: %q, replay %v", why, replay)
	}
	if why, _ := s.add("b", now.Add(time.Minute).UnixMilli(), now); why != "" {
		t.Errorf("b: %q", why)
	}
	// Eleven minutes on (past a prune), b has expired and is forgotten.
	later := now.Add(11 * time.Minute)
	if why, _ := s.add("c", exp, later); why != "" {
		t.Errorf("c: %q", why)
	}
	if n := s.len(); n != 2 {
		t.Errorf("%d IDs held after b expired, want 2 (a, c)", n)
	}
	if why, _ := s.add("a", exp, later); why == "" {
		t.Errorf("a ran twice before its expiry")
	}
	if why, _ := s.add("a", exp+1, time.UnixMilli(exp)); why != "" {
		t.Errorf("a after its expiry: %q", why)
	}

	full := seenJobs{max: 2}
	full.add("x", exp, now)
	full.add("y", exp, now)
	if why, replay := full.add("z", exp, now); replay || !strings.Contains(why, "no more until some do") {
		t.Errorf("a full set: %q, replay %v", why, replay)
	}
	// Once they expire, room again.
	if why, _ := full.add("z", exp+time.Hour.Milliseconds(), time.UnixMilli(exp)); why != "" {
		t.Errorf("after the full set's jobs expired: %q", why)
	}
}
