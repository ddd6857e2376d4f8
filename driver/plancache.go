package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/offcc/offcc/cache"
)

// planCache remembers clang's job list (its -### output) per command line,
// so that rebuilding the same translation unit with the same flags skips the
// clang driver start on the critical path. The private temporary directory
// is stored as a placeholder and replaced by the new one on reuse.
//
// Plans are entries (cache.KindPlan) of the build cache's store, trimmed
// with everything else in it (one cache, one size limit). The key (see
// cache.PlanKeyText) covers everything clang's job list depends on that can
// change between runs of one command: the clang executable and its driver
// libraries, the configuration files clang reads, the GCC installations it
// picks its C++ library and crt files from, the ROCm and CUDA installations
// it takes device libraries from, the working directory, the driver name,
// every argument and the environment (less variables that differ per run:
// make's jobserver, TMPDIR, ...). A hit is used only if every source file
// the plan reads still exists. Nothing the plan cache does can fail a
// build: an unreadable, damaged or vanished entry is a miss, and write
// errors are ignored.
type planCache struct {
	c *cache.Cache
}

// tempPlaceholder stands for the private temporary directory in stored plans.
const tempPlaceholder = "\x00OFFCC_TMP\x00"

// newPlanCache returns the plan cache of the build cache c, or nil when
// that is off (c is nil) or OFFCC_PLAN_CACHE=0.
func newPlanCache(c *cache.Cache, getenv func(string) string) *planCache {
	switch getenv("OFFCC_PLAN_CACHE") {
	case "0", "off", "no", "false":
		return nil
	}
	if c == nil {
		return nil
	}
	return &planCache{c: c}
}

// key names the entry for one clang invocation: the SHA-256 of
// cache.PlanKeyText. It reports false when the invocation cannot be keyed
// (clang or the working directory cannot be found); the caller then runs
// clang uncached.
func (c *planCache) key(clang, argv0 string, args, env []string) (string, bool) {
	text, ok := cache.PlanKeyText(clang, argv0, args, env)
	if !ok {
		return "", false
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), true
}

// load returns the stored output with tempDir put in, if there is a sound
// entry, and marks the entry used.
func (c *planCache) load(key, tempDir string) (string, bool) {
	sum, err := cache.ParseSum(key)
	if err != nil {
		return "", false
	}
	e, err := c.c.Store.Get(sum)
	if err != nil || e.Kind != cache.KindPlan || len(e.Record) == 0 {
		return "", false
	}
	return strings.ReplaceAll(string(e.Record), tempPlaceholder, tempDir), true
}

// store saves a successful -### output; failures to write are ignored (the
// cache only saves time).
func (c *planCache) store(key, tempDir, output string) {
	if output == "" || !c.c.Writable() {
		return
	}
	sum, err := cache.ParseSum(key)
	if err != nil {
		return
	}
	body := output
	if tempDir != "" {
		body = strings.ReplaceAll(output, tempDir, tempPlaceholder)
	}
	c.c.Store.Put(sum, &cache.Entry{Kind: cache.KindPlan, Record: []byte(body)})
}
