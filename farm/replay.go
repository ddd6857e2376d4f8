package farm

import (
	"fmt"
	"sync"
	"time"
)

// A job record is signed by its client, but Redis is writable by anyone
// who can reach it: a signed job can be put back on the stream (XADD)
// after it ran, as often as an attacker likes. A worker therefore runs a
// job only before its expiry (Job.Expires, at most maxJobLife ahead) and
// each job ID at most once before then: it remembers the IDs it ran, in
// its own memory (never in Redis), until they expire.

// maxSeenJobs bounds the job IDs a worker remembers: past it, new jobs
// are refused until older ones expire. At about 100 bytes an ID it is
// some 100 MiB, and more jobs than a worker can run honestly in an
// hour (maxJobLife).
const maxSeenJobs = 1 << 20

// expiryProblem returns why a job expiring at expires (Unix ms) must not
// run at now, or "": it has expired, or expires further ahead than a
// client sets it (maxJobLife, clock skew included).
func expiryProblem(expires int64, now time.Time) string {
	switch at := time.UnixMilli(expires); {
	case expires <= 0:
		return "the job has no expiry"
	case !at.After(now):
		return fmt.Sprintf("the job expired %v ago", now.Sub(at).Round(time.Second))
	case at.Sub(now) > maxJobLife:
		return fmt.Sprintf("the job expires in %v, more than the %v a worker accepts", at.Sub(now).Round(time.Second), maxJobLife)
	}
	return ""
}

// seenJobs is the set of job IDs a worker ran, each until its expiry.
// The zero value is empty and ready; it is safe for concurrent use.
type seenJobs struct {
	mu   sync.Mutex
	ids  map[string]int64 // job ID -> expiry, Unix ms
	next int64            // when to prune next, Unix ms
	max  int              // maxSeenJobs when 0
}

// add records that job id, expiring at expires (Unix ms), runs now. It
// returns "" the first time; else why not, and whether id was seen
// before its expiry (a replay) rather than the set being full.
func (s *seenJobs) add(id string, expires int64, now time.Time) (why string, replay bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := now.UnixMilli()
	if s.ids == nil {
		s.ids = map[string]int64{}
	}
	limit := s.max
	if limit <= 0 {
		limit = maxSeenJobs
	}
	if ms >= s.next || len(s.ids) >= limit {
		s.prune(ms)
	}
	if exp, ok := s.ids[id]; ok && exp > ms {
		return fmt.Sprintf("job %s already ran on this worker (a replay)", id), true
	}
	if len(s.ids) >= limit {
		return fmt.Sprintf("this worker ran %d jobs that have not expired yet: no more until some do", len(s.ids)), false
	}
	s.ids[id] = expires
	return "", false
}

// prune forgets the jobs expired at ms; add calls it every ten seconds,
// and whenever the set is full.
func (s *seenJobs) prune(ms int64) {
	for id, exp := range s.ids {
		if exp <= ms {
			delete(s.ids, id)
		}
	}
	s.next = ms + (10 * time.Second).Milliseconds()
}

// len returns how many job IDs the set holds.
func (s *seenJobs) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}
