package main

import (
	"fmt"
)

// cacheClear runs "offcc cache clear": every entry and the counters go.
func cacheClear(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("clear", args, nil, nil)
	if err != nil {
		return err
	}
	if len(ca.operands) > 0 {
		return &usageError{"clear", fmt.Sprintf("unexpected argument '%s'", ca.operands[0])}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	if why := unwritable(c.Dir); why != "" {
		return &plainError{fmt.Sprintf("cannot clear the cache %s: %s", c.Dir, why)}
	}
	res, err := c.Clear()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "removed %d entries (%s) and the statistics from %s\n", res.Entries, humanBytes(res.Bytes), c.Dir)
	return nil
}
