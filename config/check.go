package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Check returns what is wrong with value v of setting s, with an example
// of a good one ("not a size; use ..., such as 10G"), or "" when it is
// good. inFile says v comes from the configuration file, where paths must
// be absolute. An empty value is good: it leaves the setting unset.
func Check(s Setting, v string, inFile bool) string {
	t := strings.TrimSpace(v)
	if t == "" {
		return ""
	}
	switch s.Kind {
	case Bool:
		if _, ok := ParseBool(t); !ok {
			return "not a boolean; use 0 or 1 (also off/on, no/yes, false/true), such as 1"
		}
	case Size:
		if _, err := ParseSize(t); err != nil && !slices.Contains(s.Aliases, strings.ToLower(t)) {
			return "not a size; use a number of bytes with an optional K, M, G or T suffix, such as 10G"
		}
	case Duration:
		if d, err := time.ParseDuration(t); err != nil || d <= 0 {
			return "not a duration; use a positive number with a unit (ms, s, m or h), such as 2s"
		}
	case Enum:
		l := strings.ToLower(t)
		for _, a := range append(append([]string(nil), s.Values...), s.Aliases...) {
			if l == a {
				return ""
			}
		}
		return fmt.Sprintf("not one of %s; use one of them, such as %s", strings.Join(s.Values, ", "), s.Values[len(s.Values)-1])
	case RedisURL:
		u := t
		if s.Env == "OFFCC_REMOTE_CACHE" {
			u = strings.TrimSuffix(u, "|readonly")
		}
		if why := checkRedisURL(u); why != "" {
			return why + "; use redis://[user:password@]host:port[/db] (or rediss:// for TLS), such as redis://cache.example.com:6379"
		}
	case Path:
		if inFile && !filepath.IsAbs(t) {
			return "a relative path in the configuration file; use an absolute path or one starting with ~/, such as /var/tmp/offcc"
		}
	}
	return ""
}

// checkRedisURL says what keeps u from being a Redis server's URL, as
// the shared cache and the farm open them ("" when nothing).
func checkRedisURL(u string) string {
	p, err := url.Parse(u)
	switch {
	case err != nil:
		return "not a URL"
	case p.Scheme != "redis" && p.Scheme != "rediss":
		return "not a redis:// URL"
	case p.Opaque != "" || p.Hostname() == "":
		return "no host in the URL"
	case p.RawQuery != "" || p.Fragment != "":
		return "a query or fragment in the URL"
	}
	if db := strings.Trim(p.Path, "/"); db != "" {
		if _, err := strconv.Atoi(db); err != nil {
			return "not a database number after the host"
		}
	}
	return ""
}

// ParseBool reads a boolean setting: 0/1, off/on, no/yes, false/true, in
// any case.
func ParseBool(v string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "on", "yes", "true":
		return true, true
	case "0", "off", "no", "false":
		return false, true
	}
	return false, false
}

// ParseAge reads an age as ccache's --evict-older-than does: a whole
// number with the suffix d (days) or s (seconds), such as 7d or 3600s.
func ParseAge(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	unit := time.Duration(0)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'd':
			unit = 24 * time.Hour
		case 's':
			unit = time.Second
		}
	}
	if unit == 0 {
		return 0, fmt.Errorf("want a whole number with the suffix d (days) or s (seconds), such as 7d or 3600s")
	}
	n, err := strconv.ParseUint(t[:len(t)-1], 10, 64)
	if errors.Is(err, strconv.ErrRange) || err == nil && n > uint64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("too large: at most %dd", math.MaxInt64/(24*time.Hour))
	}
	if err != nil {
		return 0, fmt.Errorf("want a whole number with the suffix d (days) or s (seconds), such as 7d or 3600s")
	}
	return time.Duration(n) * unit, nil
}

// ParseSize reads a size: a number of bytes with an optional K, M, G or T
// suffix (powers of 1024; "KiB", "MB" and the like are read the same). 0
// is a size: for the cache, no limit.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || !(f >= 0) || f*float64(mult) > 1<<62 { // !(f >= 0): NaN too
		return 0, fmt.Errorf("not a size")
	}
	return int64(f * float64(mult)), nil
}
