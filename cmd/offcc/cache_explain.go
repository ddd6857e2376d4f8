package main

import (
	"context"
	"fmt"
	"os"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/driver"
	"github.com/offcc/offcc/toolchain"
)

// cacheExplain runs a compile with OFFCC_CACHE_DEBUG=1 and returns its
// exit status.
func cacheExplain(ctx context.Context, args []string, env *cacheEnv) (int, error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return 1, &usageError{"explain", "no command given"}
	}
	argv0 := "offcc"
	switch toolchain.ToolName(args[0]) {
	case "offcc", "clang":
		args = args[1:]
	case "offcc++", "clang++":
		argv0 = "offcc++"
		args = args[1:]
	}
	cfg, err := cache.ConfigFromEnv(env.getenv)
	if err != nil {
		return 1, err
	}
	if cfg.Mode == cache.Off {
		fmt.Fprintf(env.stderr, "offcc: warning: cache explain: the build cache is off (OFFCC_CACHE or no cache directory): there is nothing to explain\n")
	}
	self, err := os.Executable()
	if err != nil {
		self = argv0
	}
	inv := &driver.Invocation{
		Argv0: argv0, Args: args, Env: append(append([]string(nil), env.environ...), "OFFCC_CACHE_DEBUG=1"),
		Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr, Self: self,
	}
	return driver.Main(ctx, inv), nil
}
