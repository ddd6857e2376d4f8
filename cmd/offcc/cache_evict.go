package main

import (
	"fmt"
	"time"

	"github.com/offcc/offcc/config"
)

// cacheEvict runs "offcc cache evict --older-than AGE": ccache's
// --evict-older-than, for the local cache.
func cacheEvict(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("evict", args, nil, []string{"--older-than"})
	if err != nil {
		return err
	}
	if len(ca.operands) > 0 {
		return &usageError{"evict", fmt.Sprintf("unexpected argument '%s'", ca.operands[0])}
	}
	v, ok := ca.values["--older-than"]
	if !ok {
		return &usageError{"evict", "no age given (--older-than AGE)"}
	}
	age, perr := config.ParseAge(v)
	if perr != nil {
		return &usageError{"evict", fmt.Sprintf("--older-than '%s': %v", v, perr)}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	if why := unwritable(c.Dir); why != "" {
		return &plainError{fmt.Sprintf("cannot evict from the cache %s: %s", c.Dir, why)}
	}
	res, err := c.Store.EvictOlderThan(time.Now().Add(-age))
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "removed %d entries (%s) not used for %s; kept %d entries (%s)\n",
		res.RemovedEntries, humanBytes(res.RemovedBytes), v, res.Entries, humanBytes(res.Bytes))
	return nil
}
