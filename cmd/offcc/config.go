package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/config"
)

const configUsage = `USAGE: offcc config
       offcc config get KEY
       offcc config set KEY VALUE
       offcc config unset KEY

Without a subcommand, offcc config prints the configuration file in use,
then every setting as "(ORIGIN) key = value": ORIGIN is "default", the
file and line that set it, or "environment". A bad value is marked, and
listed on stderr; the status is then 1.

  get KEY          print the value of KEY in force
  set KEY VALUE    check VALUE and write "KEY = VALUE" to the configuration
                   file (creating it and its directory when missing; other
                   lines and comments stay)
  unset KEY        remove KEY's lines from the configuration file (those
                   of a key that is no setting too, with a warning: such a
                   line fails every command)

KEY is a setting's key (cache_size) or its environment variable
(OFFCC_CACHE_SIZE). The file is $OFFCC_CONFIG, else
$XDG_CONFIG_HOME/offcc/offcc.conf, else ~/.config/offcc/offcc.conf; it
holds "key = value" lines and # comments. The environment overrides the
file. A bad value in either fails every offcc command.
`

// configSubcommands are the usage lines of config's subcommands.
var configSubcommands = map[string]string{
	"get":   "offcc config get KEY",
	"set":   "offcc config set KEY VALUE",
	"unset": "offcc config unset KEY",
}

// configMain runs "offcc config ARGS..." with the environment environ
// (the process's: the configuration is loaded here, even when it is bad).
func configMain(args []string, environ []string, stdout, stderr io.Writer) int {
	cfg, _ := config.Load(environ)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "offcc: error: %s\n", fmt.Sprintf(format, a...))
		return 1
	}
	if len(args) == 0 {
		return configShow(cfg, stdout, stderr)
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, configUsage)
		return 0
	}
	usage, ok := configSubcommands[sub]
	if !ok {
		if strings.HasPrefix(sub, "-") {
			return fail("config: unknown argument '%s' (see 'offcc config --help')", sub)
		}
		return fail("%s", unknownSubcommand("config", sub, sortedKeys(configSubcommands)))
	}
	for _, a := range rest {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintf(stdout, "USAGE: %s\n", usage)
			return 0
		}
	}
	want := 1
	if sub == "set" {
		want = 2
	}
	if len(rest) != want {
		return fail("config %s: want %d argument%s (usage: %s)", sub, want, map[bool]string{true: "s"}[want > 1], usage)
	}
	key := rest[0]
	switch sub {
	case "get":
		v, ok := cfg.Get(key)
		if !ok {
			return fail("config get: %s", unknownSetting(key))
		}
		fmt.Fprintln(stdout, showValue(v, cfg))
		return 0
	case "set":
		if cfg.File == "" {
			return fail("config set: no configuration file: set %s (or HOME)", config.EnvConfig)
		}
		if err := config.SetInFile(cfg.File, key, rest[1]); err != nil {
			return fail("config set: %s", oneLine(err.Error()))
		}
		s, _ := config.Lookup(key)
		fmt.Fprintf(stdout, "set %s = %s in %s\n", s.Key, strings.TrimSpace(rest[1]), cfg.File)
		if v, ok := cfg.Get(key); ok && v.Origin.Kind == config.FromEnv {
			fmt.Fprintf(stderr, "offcc: warning: %s in the environment overrides it\n", s.Env)
		}
		return 0
	default: // unset
		if cfg.File == "" {
			return fail("config unset: no configuration file: set %s (or HOME)", config.EnvConfig)
		}
		removed, err := config.UnsetInFile(cfg.File, key)
		if err != nil {
			return fail("config unset: %s", oneLine(err.Error()))
		}
		s, known := config.Lookup(key)
		switch {
		case !known:
			fmt.Fprintf(stderr, "offcc: warning: unknown key '%s' removed from %s\n", strings.TrimSpace(key), cfg.File)
		case removed:
			fmt.Fprintf(stdout, "removed %s from %s\n", s.Key, cfg.File)
		default:
			fmt.Fprintf(stdout, "%s is not set in %s\n", s.Key, cfg.File)
		}
		return 0
	}
}

// unknownSetting says key is no setting, with the closest one.
func unknownSetting(key string) string {
	msg := fmt.Sprintf("unknown setting '%s'", key)
	if sug := config.Suggest(key); sug != "" {
		msg += fmt.Sprintf("; did you mean '%s'?", sug)
	}
	return msg + " (offcc config lists them)"
}

// configShow prints the file in use and every setting with its origin, as
// ccache -p does; bad values are marked and listed on stderr (status 1).
func configShow(cfg *config.Config, stdout, stderr io.Writer) int {
	switch {
	case cfg.File == "":
		fmt.Fprintf(stdout, "configuration file: none (no %s and no home directory)\n", config.EnvConfig)
	case cfg.FileFound:
		fmt.Fprintf(stdout, "configuration file: %s\n", cfg.File)
	default:
		fmt.Fprintf(stdout, "configuration file: %s (not found)\n", cfg.File)
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 1, ' ', 0)
	for _, v := range cfg.Values() {
		line := fmt.Sprintf("(%s)\t%s = %s", v.Origin, v.Key, showValue(v, cfg))
		if v.Err != nil {
			line += "  <- bad value"
		}
		fmt.Fprintln(tw, strings.TrimRight(line, " "))
	}
	tw.Flush()
	problems := cfg.Problems()
	for _, p := range problems {
		fmt.Fprintf(stderr, "offcc: error: %s\n", oneLine(p.Error()))
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}

// showValue is v's value as config shows it: passwords in URLs hidden,
// and the cache directory's default as found.
func showValue(v config.Value, cfg *config.Config) string {
	switch {
	case v.Kind == config.RedisURL && v.Value != "":
		url, ro := strings.CutSuffix(v.Value, "|readonly")
		if ro {
			return redisstore.Redact(url) + "|readonly"
		}
		return redisstore.Redact(url)
	case v.Key == "cache_dir" && v.Value == "":
		return cache.DefaultDir(cfg.Getenv)
	}
	return v.Value
}
