package config

// Kind says what a setting's value is, for checking it and for the example
// a bad value's message gives.
type Kind int

// The kinds of value.
const (
	// String is any text.
	String Kind = iota
	// Bool is 0/1 (also off/on, no/yes, false/true).
	Bool
	// Size is a number of bytes with an optional K, M, G or T suffix
	// (powers of 1024); 0 means no limit.
	Size
	// Duration is a Go duration such as 2s or 500ms.
	Duration
	// Path is a file or directory name.
	Path
	// KeyList is a list of public-key files or directories, ':' or ','
	// between them.
	KeyList
	// RedisURL is redis://[user:password@]host:port[/db].
	RedisURL
	// Enum is one of Setting.Values.
	Enum
)

// Setting is one configuration setting.
type Setting struct {
	// Key is its name in the configuration file ("cache_size").
	Key string
	// Env is its environment variable ("OFFCC_CACHE_SIZE").
	Env string
	// Kind is the kind of its value.
	Kind Kind
	// Values are the accepted values of an Enum, the first the default.
	Values []string
	// Aliases are other spellings an Enum accepts (not listed in help):
	// "off" for "0" and the like; for a Size, words it accepts besides
	// sizes ("off").
	Aliases []string
	// Default is the value in force when neither the environment nor the
	// file sets it, as "offcc config" shows it ("" for unset).
	Default string
	// Placeholder names the value in --help ("SIZE", "DIR").
	Placeholder string
	// Doc says what it does, in one paragraph of plain text.
	Doc string
	// Group is the part of offcc that reads it: "build", "cache",
	// "shared cache", "farm" or "worker".
	Group string
}

// All returns offcc's settings, in the order --help and "offcc config"
// list them.
func All() []Setting {
	return []Setting{
		{Key: "llvm_dir", Env: "OFFCC_LLVM_DIR", Kind: Path, Placeholder: "DIR", Group: "build",
			Doc: "the LLVM tools to use (see --llvm-dir); default: beside clang-22 on PATH, else /usr/lib/llvm-22/bin"},
		{Key: "job_trace", Env: "OFFCC_JOB_TRACE", Kind: Path, Placeholder: "FILE", Group: "build",
			Doc: "write a Chrome trace of every job to FILE (see --job-trace)"},
		{Key: "trace", Env: "OFFCC_TRACE", Kind: Bool, Default: "0", Placeholder: "0|1", Group: "build",
			Doc: "print one line per finished job (its kind, target, offload arch, exit status, wall and CPU time, time waiting for a job slot and for memory, cache result), then the CPU time per tool and offcc's own"},
		{Key: "compile_commands", Env: "OFFCC_COMPILE_COMMANDS", Kind: Path, Placeholder: "FILE", Group: "build",
			Doc: "add each compile to the JSON compilation database FILE (see --print-compile-commands)"},
		{Key: "progress", Env: "OFFCC_PROGRESS", Kind: Enum, Values: []string{"auto", "0", "1"}, Default: "auto", Placeholder: "0|1", Group: "build",
			Doc: "on a terminal, a build running over 2 s shows its running jobs on one status line; 0 turns it off, 1 shows it even without a terminal"},
		{Key: "offload_mem", Env: "OFFCC_OFFLOAD_MEM", Kind: Size, Aliases: []string{"off"}, Placeholder: "SIZE|off", Group: "build",
			Doc: "the memory jobs may use at once, such as 600M (see --offload-mem): jobs start while their expected peaks fit in the smallest of it, the cgroup's limit and MemAvailable; 0: no explicit limit; off: by cores alone"},
		{Key: "base_dir", Env: "OFFCC_BASE_DIR", Kind: Path, Placeholder: "DIR", Group: "build",
			Doc: "absolute paths under DIR are rewritten relative to the working directory before clang sees them (ccache's base_dir): objects, OpenMP kernel names, CUIDs and cache keys then do not depend on where DIR lies"},
		{Key: "cache", Env: "OFFCC_CACHE", Kind: Enum, Values: []string{"1", "0", "readonly"},
			Aliases: []string{"on", "yes", "true", "readwrite", "off", "no", "false", "read-only", "ro"}, Default: "1", Placeholder: "0|1|readonly", Group: "cache",
			Doc: "turn the build cache off (0), or use it without writing to it (readonly)"},
		{Key: "cache_dir", Env: "OFFCC_CACHE_DIR", Kind: Path, Placeholder: "DIR", Group: "cache",
			Doc: "where the build cache lives; default $XDG_CACHE_HOME/offcc, else ~/.cache/offcc"},
		{Key: "cache_size", Env: "OFFCC_CACHE_SIZE", Kind: Size, Default: "5G", Placeholder: "SIZE", Group: "cache",
			Doc: "the build cache's size limit, such as 10G (K, M, G, T suffixes; 0: no limit); least recently used entries go first"},
		{Key: "cache_compression_level", Env: "OFFCC_CACHE_COMPRESSION_LEVEL", Kind: String, Default: "0", Placeholder: "LEVEL|off", Group: "cache",
			Doc: "the zstd level the build cache's blobs are written at, locally and to the shared cache, as ccache's compression_level: 0 is the default, level 1 (the fastest), up to 22 (1-2: klauspost's fastest encoder, 3-5 its default, 6-9 better, 10 and up best; negative levels are its fastest); off stores them uncompressed. Blobs written at any level, or none, are read"},
		{Key: "cache_debug", Env: "OFFCC_CACHE_DEBUG", Kind: Bool, Default: "0", Placeholder: "0|1", Group: "cache",
			Doc: "print each job's hit or miss, and for a miss what changed since the last build (flag, input, header, tool)"},
		{Key: "plan_cache", Env: "OFFCC_PLAN_CACHE", Kind: Bool, Default: "1", Placeholder: "0|1", Group: "cache",
			Doc: "cache clang's job lists (0: ask clang every time)"},
		{Key: "remote_cache", Env: "OFFCC_REMOTE_CACHE", Kind: RedisURL, Placeholder: "URL", Group: "shared cache",
			Doc: "share the build cache through the Redis server URL (redis://[user:password@]host:port[/db]; a |readonly suffix reads without writing)"},
		{Key: "remote_cache_readonly", Env: "OFFCC_REMOTE_CACHE_READONLY", Kind: Bool, Default: "0", Placeholder: "0|1", Group: "shared cache",
			Doc: "read the shared cache without writing to it"},
		{Key: "trusted_cache_keys", Env: "OFFCC_TRUSTED_CACHE_KEYS", Kind: KeyList, Placeholder: "LIST", Group: "shared cache",
			Doc: "public keys (NAME.pub files or directories, ':' or ',' between them) whose signed shared-cache entries are hits and whose cache archives import; entries nobody trusted signed are misses"},
		{Key: "remote_cache_insecure", Env: "OFFCC_REMOTE_CACHE_INSECURE", Kind: Bool, Default: "0", Placeholder: "0|1", Group: "shared cache",
			Doc: "use the shared cache without keys: unsigned entries are hits (only where nobody untrusted can write to the server)"},
		{Key: "signing_key", Env: "OFFCC_SIGNING_KEY", Kind: Path, Placeholder: "FILE", Group: "shared cache",
			Doc: "the private key (NAME.key) that signs this build's farm jobs, a worker's results and, when it is a trusted cache key, shared-cache entries (offcc key generate NAME)"},
		{Key: "remote_exec", Env: "OFFCC_REMOTE_EXEC", Kind: RedisURL, Placeholder: "URL", Group: "farm",
			Doc: "send device jobs to the build farm on the Redis server URL (see --remote-exec; a worker's default --redis)"},
		{Key: "remote_exec_pickup", Env: "OFFCC_REMOTE_EXEC_PICKUP", Kind: Duration, Default: "2s", Placeholder: "DURATION", Group: "farm",
			Doc: "how long a job waits for a worker before it runs here"},
		{Key: "remote_exec_race", Env: "OFFCC_REMOTE_EXEC_RACE", Kind: Bool, Default: "1", Placeholder: "0|1", Group: "farm",
			Doc: "race a farm job that is slow with a local run when a local slot is free, and one that is late whatever waits; the first to finish wins (0: a late job is taken back and runs here)"},
		{Key: "trusted_workers", Env: "OFFCC_TRUSTED_WORKERS", Kind: KeyList, Placeholder: "LIST", Group: "farm",
			Doc: "public keys of the workers whose results are believed (others' jobs run here, with a warning)"},
		{Key: "remote_exec_insecure", Env: "OFFCC_REMOTE_EXEC_INSECURE", Kind: Bool, Default: "0", Placeholder: "0|1", Group: "farm",
			Doc: "use the build farm without keys: unsigned jobs and results (only where nobody untrusted can write to the server)"},
		{Key: "trusted_clients", Env: "OFFCC_TRUSTED_CLIENTS", Kind: KeyList, Placeholder: "LIST", Group: "worker",
			Doc: "public keys of the clients whose jobs a worker runs"},
		{Key: "sandbox_disable", Env: "OFFCC_SANDBOX_DISABLE", Kind: String, Placeholder: "LAYERS", Group: "worker",
			Doc: "the worker's sandbox layers to leave out (see offcc worker --help)"},
	}
}

// EnvConfig is the environment variable naming the configuration file.
const EnvConfig = "OFFCC_CONFIG"
