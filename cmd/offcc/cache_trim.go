package main

import (
	"fmt"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/config"
)

// cacheTrim runs "offcc cache trim [--size SIZE]": least recently used
// entries go, down to 90% of the size limit or to SIZE.
func cacheTrim(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("trim", args, nil, []string{"--size"})
	if err != nil {
		return err
	}
	if len(ca.operands) > 0 {
		return &usageError{"trim", fmt.Sprintf("unexpected argument '%s'", ca.operands[0])}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	var res cache.TrimResult
	if v, ok := ca.values["--size"]; ok {
		size, perr := config.ParseSize(v)
		if perr != nil {
			return &usageError{"trim", fmt.Sprintf("--size %s: %v", v, perr)}
		}
		res, err = c.Store.Trim(size, time.Now())
	} else {
		res, err = c.Trim(time.Now())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "removed %d entries (%s); kept %d entries (%s)\n",
		res.RemovedEntries, humanBytes(res.RemovedBytes), res.Entries, humanBytes(res.Bytes))
	return nil
}
