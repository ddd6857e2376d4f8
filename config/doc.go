// Package config is offcc's configuration, in the manner of ccache's: the
// settings a build, the cache, the shared cache, the build farm and a worker
// read, each from the environment (OFFCC_*), from the configuration file, or
// from its default.
//
// # The file
//
// offcc reads one file: the one OFFCC_CONFIG names, else
// $XDG_CONFIG_HOME/offcc/offcc.conf (when XDG_CONFIG_HOME is an absolute
// path), else $HOME/.config/offcc/offcc.conf. A missing default file is
// fine (every setting then comes from the environment or its default); a
// missing file that OFFCC_CONFIG names, or a file that cannot be read, is
// an error. "offcc config set" creates the file, and its directory, when
// they are missing.
//
// Its format is ccache.conf's: one "key = value" a line, spaces around the
// key and the value ignored; lines whose first non-blank character is '#'
// are comments; blank lines are ignored. Keys are the names "offcc config"
// lists (cache_size, remote_cache, ...). A value is the rest of the line,
// taken literally (no quotes, no variable expansion), except that a path
// setting starting with "~/" has it replaced by $HOME/; paths in the file
// must be absolute. When a key appears twice the later line wins. A line
// with no '=', or an unknown key, is an error naming the file and the line
// (with "did you mean" for a key close to a known one); "offcc config
// unset KEY" removes an unknown key's lines, with a warning.
//
// # Precedence
//
// For each setting: its environment variable when it is set and not empty,
// else the file's line, else its default. "offcc config" shows each value
// with its origin: "default", the file and line ("/home/u/.config/offcc/
// offcc.conf:3"), or "environment".
//
// offcc passes the file's settings on to everything it runs as OFFCC_*
// environment variables (Config.Environ), so that its own child processes
// and every part of offcc see the same values.
//
// # Bad values
//
// Every value is checked against its kind (Kind: a size such as 10G, a
// Go duration such as 2s, 0/1, one of a list, a redis:// URL, a path) when
// offcc starts. As ccache does, a bad value fails the command: the compile
// (or the subcommand) exits with status 1 and one line that names the
// setting, its origin and an example of a valid value, such as
//
//	offcc: error: cache_size = "garbage" (from /home/u/.config/offcc/offcc.conf:3): not a size; use a number of bytes with an optional K, M, G or T suffix, such as 10G
//	offcc: error: OFFCC_CACHE_SIZE=garbage (from the environment): not a size; ...
//
// A bad file (unreadable, a line without '=', an unknown key) fails the
// same way. Only "offcc config" still runs: it lists every setting, marks
// the bad ones and exits with status 1. Problems that only show when a
// setting is used (a Redis server that does not answer, a key file that
// cannot be read, an LLVM directory without clang) are not checked here and
// keep their behaviour: a warning and a local build for the shared cache
// and the build farm, an error for the tools.
//
// Sizes are a number of bytes with an optional K, M, G or T suffix (powers
// of 1024; "KiB", "MB" and the like are read the same); 0 means no limit.
//
// # The table
//
// All is the one place a setting is described: the loader, "offcc config",
// --help and the man page read it.
package config
