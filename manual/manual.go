// Package manual is the one source of offcc's user documentation that the
// program itself prints: the options, environment, configuration,
// subcommands and files that "offcc --help" lists and that the man page
// offcc.1 describes. The environment and configuration come from
// config.All(), so each setting is described in one place.
//
// Help renders --help; Man renders the man page (docs/offcc.1, written by
// "go generate ./manual" and checked against Man by the package's tests).
package manual

//go:generate go run ./gen -o ../docs/offcc.1

// Option is one of offcc's own command-line options.
type Option struct {
	// Names are its spellings as --help shows them ("-j N",
	// "--offload-jobs=N").
	Names []string
	// Doc says what it does, in one paragraph of plain text.
	Doc string
}

// Subcommand is one of offcc's subcommands.
type Subcommand struct {
	// Name is what follows "offcc" ("cache", "syclbin link").
	Name string
	// Synopsis are its usage lines, without the leading "offcc ".
	Synopsis []string
	// Doc says what it does, in one paragraph of plain text.
	Doc string
}

// File is a file offcc reads or writes on its own.
type File struct {
	// Path is where it lies, with the variables that move it.
	Path string
	// Doc says what it is.
	Doc string
}

// Overview is the description that opens --help and the man page.
const Overview = `offcc accepts clang's command line. OpenMP offload (-fopenmp with -fopenmp-targets= or --offload-arch=), CUDA, HIP and SYCL (-fsycl) compilations are planned as a job graph and independent jobs (one device compile per target, the host compile) run at the same time; offload links run offcc's link stage. Every job whose outputs are a function of its inputs (plain -c compiles included) is cached by content in the build cache and restored on a later build instead of run. Everything else is handed to clang.`

// ConfigDoc describes the configuration file, for --help and the man page.
const ConfigDoc = `Every setting below is read from its environment variable or from the configuration file: $OFFCC_CONFIG, else $XDG_CONFIG_HOME/offcc/offcc.conf, else ~/.config/offcc/offcc.conf, in "key = value" lines (# starts a comment), the key being the setting's name in lower case without OFFCC_ (cache_size = 10G). The environment overrides the file. A bad value in either fails the command with one line naming the setting, where it came from and a valid example. offcc config lists every setting with its value and origin; offcc config set KEY VALUE writes the file.`

// Options returns offcc's own options, in the order --help lists them.
func Options() []Option {
	return []Option{
		{[]string{"-j N", "--offload-jobs=N"}, "Run at most N jobs at once (default: make's jobserver where make hands it to the recipe: make 4.4 and later always, make 4.3 to lines marked + or naming $(MAKE); else the CPU count)"},
		{[]string{"--offload-jobs=jobserver"}, "Take job slots from make's jobserver"},
		{[]string{"--offload-mem=SIZE|off"}, "Start jobs only while their expected peak memory fits in the smallest of SIZE (such as 600M), the cgroup's limit and MemAvailable, shared with the other offcc processes of a make -j; peaks are learned in the build cache, and a job the OOM killer kills runs again alone (also $OFFCC_OFFLOAD_MEM; 0: no explicit limit; off: by cores alone)"},
		{[]string{"--llvm-dir=DIR"}, "Use the LLVM tools in DIR (also $OFFCC_LLVM_DIR; default: beside clang-22 on PATH, else /usr/lib/llvm-22/bin)"},
		{[]string{"-###"}, "Print the commands, run nothing"},
		{[]string{"-ccc-print-phases"}, "Print clang's action graph"},
		{[]string{"-ccc-print-bindings"}, "Print offcc's jobs with their inputs and outputs"},
		{[]string{"--print-job-graph=json|dot"}, "Print offcc's typed job graph on stdout, run nothing"},
		{[]string{"--job-trace=FILE"}, "Write a Chrome trace (Perfetto, chrome://tracing) of every job run, link-stage jobs included (also $OFFCC_JOB_TRACE)"},
		{[]string{"--print-compile-commands=FILE"}, "Add this command's compiles to the JSON compilation database FILE (compile_commands.json): a host entry and one entry per device compile, so clang-tidy and clangd see device code (also $OFFCC_COMPILE_COMMANDS)"},
		{[]string{"-fsyclbin[=input|object|executable]"}, "Compile SYCL device code only and write a .syclbin file (-o, default a.syclbin) in that state (bare: executable; input and object keep unresolved device symbols for a later link)"},
		{[]string{"--syclbin-version=1|2"}, "Write SYCLBIN version 1 (default: one SYCLBIN body in an offload binary) or DPC++'s version 2"},
		{[]string{"--offload-rdc"}, "Alias of -fgpu-rdc"},
		{[]string{"--no-cache"}, "Neither read nor write the build cache (also OFFCC_CACHE=0)"},
		{[]string{"--no-offload-stable-names"}, "Name OpenMP kernels as clang does, after the source files' device and inode numbers (objects then differ between checkouts); by default (--offload-stable-names) offcc names them after one identity per translation unit: the source's path (relative to $OFFCC_BASE_DIR when under it) and a digest of the command's options"},
		{[]string{"--remote-exec=URL"}, "Send jobs to the offcc workers of the build farm on the Redis server URL, running other jobs here meanwhile: HIP, CUDA and SYCL compiles (device and host side), OpenMP front ends (host and device) with stable kernel names, clang -cc1 backends, lld device links, and CUDA's ptxas, fatbinary and nvlink to workers that have this CUDA toolkit; plain compiles, links and offcc's own steps run here (also $OFFCC_REMOTE_EXEC; see offcc worker --help)"},
		{[]string{"--no-remote-exec"}, "Run every job here, whatever --remote-exec or $OFFCC_REMOTE_EXEC say"},
		{[]string{"@FILE"}, "Read arguments from FILE; command lines too long for the system reach clang and the tools in response files"},
		{[]string{"-v"}, "Print the commands as they run"},
		{[]string{"--help"}, "Print this help; offcc SUBCOMMAND --help prints a subcommand's"},
	}
}

// Subcommands returns offcc's subcommands, in the order --help lists them.
func Subcommands() []Subcommand {
	return []Subcommand{
		{"offload-binary", []string{"offload-binary [llvm-offload-binary options] FILE..."},
			"pack or extract offload binaries (llvm-offload-binary)"},
		{"offload-bundler", []string{"offload-bundler [clang-offload-bundler options]"},
			"bundle, unbundle or list offload bundles (clang-offload-bundler)"},
		{"inspect", []string{"inspect [--json] FILE..."},
			"describe the offload containers in files (--json for tools)"},
		{"offload-embed", []string{"offload-embed -o OUT HOST.o BLOB...", "offload-embed --hip-fatbin|--cuda-fatbin -o OUT HOST.o FATBIN"},
			"add offload binaries to a host object's .llvm.offloading (--hip-fatbin, --cuda-fatbin: a HIP or CUDA fat binary to its .hip_fatbin or .nv_fatbin)"},
		{"linker-wrapper", []string{"linker-wrapper [--llvm-dir=DIR] [options] HOST-LINKER-ARGS..."},
			"link stage (clang-linker-wrapper's command line; with --syclbin=STATE it writes a .syclbin file)"},
		{"syclbin link", []string{"syclbin link A.syclbin B.syclbin... -o OUT.syclbin"},
			"link object-state .syclbin files into an executable one"},
		{"cache", []string{"cache stats [--json] [--zero | --zero-only]", "cache clear", "cache trim [--size SIZE]",
			"cache evict --older-than AGE", "cache explain [--] COMMAND...", "cache export (--all | KEY...) -o FILE.poclbin", "cache import [--trust-archive] FILE.poclbin"},
			"the build cache: stats shows the counters (and when they were last zeroed; --zero zeroes them after printing, --zero-only without printing), clear empties it, trim trims it now, evict removes the entries not used for AGE (7d, 3600s), explain runs COMMAND with OFFCC_CACHE_DEBUG=1, export and import move entries as a poclbin archive (offcc cache --help)"},
		{"config", []string{"config", "config get KEY", "config set KEY VALUE", "config unset KEY"},
			"the settings: list each with its value and origin (default, file, environment), print one, or write or remove one in the configuration file"},
		{"worker", []string{"worker [--redis URL] [--jobs N] [options]", "worker status [--redis URL] [--json]"},
			"serve the build farm (--redis URL --jobs N); worker status lists its workers and queues (offcc worker --help)"},
		{"key", []string{"key generate NAME [--dir DIR]", "key show FILE"},
			"generate NAME: an Ed25519 key pair (NAME.key, NAME.pub) that signs farm jobs, results and shared-cache entries; show FILE: a key's name, ID and kind"},
		{"version", []string{"version"},
			"print offcc's version and the LLVM it drives"},
	}
}

// Files returns the files offcc reads or writes on its own.
func Files() []File {
	return []File{
		{"$OFFCC_CONFIG, $XDG_CONFIG_HOME/offcc/offcc.conf, ~/.config/offcc/offcc.conf",
			"the configuration file, the first of these names that is set (key = value lines)"},
		{"$XDG_CACHE_HOME/offcc, ~/.cache/offcc",
			"the build cache, unless OFFCC_CACHE_DIR (cache_dir) names another directory"},
	}
}

// Tools is the note on offcc's other names, for --help and the man page.
const Tools = `Called as llvm-offload-binary, clang-offload-packager or clang-offload-bundler (also with a suffix such as -22) offcc behaves as that tool.`
