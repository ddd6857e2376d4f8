package options

import (
	"sort"
	"sync"
)

// lldTable is LLVM 22's ld.lld table, made once.
var lldTable = sync.OnceValue(func() *Table { return newLLDTable(lldRecords) })

// LLD returns the options of ld.lld, lld's ELF driver, as LLVM 22 defines
// them (lld/ELF/Options.td), with two options of lld's generic driver
// (see lldDriverRecords). Its parser reads a command line as ld.lld
// does, except that it does not expand response files (@file), it
// accepts -flavor anywhere where lld reads it only as the first argument,
// and it parses a separate "--plugin-opt X" as an option of its own
// where lld parses it as "--plugin-opt=X".
func LLD() *Table { return lldTable() }

// newLLDTable makes the table of a release's ELF records (lldRecords, or
// another release's, see lld19Records), with lldDriverRecords and offcc's
// semantics of lld's options.
func newLLDTable(elf []Record) *Table {
	recs := make([]Record, 0, len(elf)+len(lldDriverRecords))
	recs = append(append(recs, elf...), lldDriverRecords...)
	lldSortRecords(recs)
	// ("--" is no option of lld's: ld.lld reports it as an unknown
	// argument and reads what follows as it would without it.)
	return newTable("ld.lld", LLDOption, recs, lldSemantics)
}

// lldDriverRecords are options that lld's generic driver and the ELF
// driver handle before its option table sees the command line.
var lldDriverRecords = []Record{
	// "-flavor gnu" as the first argument selects the ELF driver
	// (lld::getFlavor), as clang's AMDGPU toolchain passes it; lld
	// removes both words before parsing, and elsewhere reports -flavor as
	// an unknown argument.
	{Prefixes: []string{"-"}, Name: "flavor", ID: "flavor", Kind: Separate, Visibility: LLDOption, MetaVar: "<flavor>"},
	// "--plugin-opt X" and "-plugin-opt X" are rewritten to
	// "--plugin-opt=X" before parsing (concatLTOPluginOptions in
	// lld/ELF/DriverUtils.cpp): parse "--plugin-opt=" and the value to
	// learn which option it is. At the end of a command line, with no
	// value, lld reports it as unknown where this record has a missing
	// value.
	{Prefixes: []string{"--", "-"}, Name: "plugin-opt", ID: "plugin_opt", Kind: Separate, Visibility: LLDOption},
}

// lldSortRecords sorts records into llvm::opt::OptTable's order, the
// order in which TableGen's option emitter (CompareOptionRecords in
// llvm/utils/TableGen/OptionParserEmitter.cpp) lists them and ParseArgs
// tries them: groups first, then the sentinel Input and Unknown
// records, then the options by name as StrCmpOptionName compares them
// (case-insensitively, a name that is a prefix of another after it, names
// equal but for case in case-sensitive order), then by their prefixes,
// then Joined after the other kinds.
func lldSortRecords(recs []Record) {
	rank := func(r *Record) int {
		switch r.Kind {
		case Group:
			return 0
		case Input:
			return 1
		case Unknown:
			return 2
		}
		return 3
	}
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := &recs[i], &recs[j]
		if ra, rb := rank(a), rank(b); ra != rb || ra == 1 || ra == 2 {
			return ra < rb
		}
		if c := lldStrCmpOptionName(a.Name, b.Name); c != 0 {
			return c < 0
		}
		for k := 0; k < len(a.Prefixes) && k < len(b.Prefixes); k++ {
			if c := lldStrCmpOptionName(a.Prefixes[k], b.Prefixes[k]); c != 0 {
				return c < 0
			}
		}
		return a.Kind != Joined && b.Kind == Joined
	})
}

// lldStrCmpOptionName compares option names as llvm::StrCmpOptionName
// does (with FallbackCaseSensitive).
func lldStrCmpOptionName(a, b string) int {
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if ca, cb := lower(a[i]), lower(b[i]); ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) == len(b) && a < b:
		return -1
	case len(a) == len(b) && a > b:
		return 1
	case len(a) == len(b):
		return 0
	case len(a) == n:
		return 1 // a is a prefix of b: it comes after
	}
	return -1
}

// Why a job with an lld option never runs on a farm worker.
const (
	lldWritesUnnamed  = "writes a file the job does not name"
	lldReadsUnshipped = "reads a file that is not one of the job's inputs"
	lldReadsScript    = "reads a linker script, which may read further files"
	lldSearches       = "searches directories for files the job does not name"
	lldRunsProgram    = "runs a program"
	lldLoadsPlugin    = "loads a plugin"
	lldProgramArgs    = "passes arguments to a program lld runs"
)

// lldWrites is the semantics of an option that makes lld write a file the
// job does not name; label is what the cache counts.
func lldWrites(v ValueKind, label string) Semantics {
	return Semantics{Value: v, Uncacheable: label, NoRemote: lldWritesUnnamed}
}

// lldSemantics is what offcc knows of lld's options beyond lld's table, by
// option ID (aliases take their target's: see newOptionSet). Every
// option with a value is listed; a flag is listed when it makes lld write
// files. An option that reads or writes files beyond the job's inputs
// and -o, or runs or loads code, never runs on a farm worker; one that
// writes files the job does not name is not cached.
var lldSemantics = map[string]Semantics{
	// The output.
	"o": {Value: WriteFile},

	// Files read.
	"call_graph_ordering_file":   {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"default_script":             {Value: ReadFile, NoRemote: lldReadsScript},
	"dynamic_list":               {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"export_dynamic_symbol_list": {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"in_implib":                  {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"irpgo_profile":              {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"just_symbols":               {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"lto_cs_profile_file":        {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"lto_sample_profile":         {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"remap_inputs_file":          {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"retain_symbols_file":        {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"script":                     {Value: ReadFile, NoRemote: lldReadsScript},
	"symbol_ordering_file":       {Value: ReadFile, NoRemote: lldReadsUnshipped},
	"version_script":             {Value: ReadFile, NoRemote: lldReadsUnshipped},
	// -l names a library lld finds on the search path; --remap-inputs
	// (from-glob=to-file) reads to-file in place of an input;
	// --lto-basic-block-sections= reads a file unless its value is all,
	// labels or none.
	"library":                  {Value: Name, NoRemote: "reads a library found by search"},
	"remap_inputs":             {Value: Name, NoRemote: lldReadsUnshipped},
	"lto_basic_block_sections": {Value: Name, NoRemote: lldReadsUnshipped},

	// Directories searched, and --chroot, under which lld reads every
	// absolute path.
	"library_path": {Value: SearchDir, NoRemote: lldSearches},
	"sysroot":      {Value: SearchDir, NoRemote: lldSearches},
	"chroot":       {Value: SearchDir, NoRemote: lldSearches},

	// Files and directories written.
	"dependency_file":       lldWrites(WriteFile, "lld --dependency-file"),
	"lto_obj_path_eq":       lldWrites(WriteFile, "lld --lto-obj-path"),
	"Map":                   lldWrites(WriteFile, "lld --Map"),
	"opt_remarks_filename":  lldWrites(WriteFile, "lld optimization remarks"),
	"out_implib":            lldWrites(WriteFile, "lld --out-implib"),
	"plugin_opt_stats_file": lldWrites(WriteFile, "lld LTO statistics file"),
	"print_archive_stats":   lldWrites(WriteFile, "lld --print-archive-stats"),
	"print_gc_sections_eq":  lldWrites(WriteFile, "lld --print-gc-sections="),
	"print_symbol_order":    lldWrites(WriteFile, "lld --print-symbol-order"),
	"reproduce":             lldWrites(WriteFile, "lld --reproduce"),
	"thinlto_index_only_eq": lldWrites(WriteFile, "lld ThinLTO index files"),
	"time_trace_eq":         lldWrites(WriteFile, "lld --time-trace"),
	"why_extract":           lldWrites(WriteFile, "lld --why-extract"),
	"plugin_opt_dwo_dir_eq": lldWrites(WriteDir, "lld LTO split DWARF (.dwo) output"),
	"thinlto_cache_dir":     lldWrites(WriteDir, "lld ThinLTO cache"),
	// Flags, and a list of stages, that write files beside the output.
	"save_temps":                 lldWrites(NoValue, "lld --save-temps"),
	"save_temps_eq":              lldWrites(Name, "lld --save-temps"),
	"thinlto_index_only":         lldWrites(NoValue, "lld ThinLTO index files"),
	"thinlto_emit_index_files":   lldWrites(NoValue, "lld ThinLTO index files"),
	"thinlto_emit_imports_files": lldWrites(NoValue, "lld ThinLTO imports files"),

	// Code run or loaded.
	"error_handling_script":               {Value: Program, NoRemote: lldRunsProgram},
	"thinlto_distributor_eq":              {Value: Program, NoRemote: lldRunsProgram},
	"thinlto_remote_compiler_eq":          {Value: Program, NoRemote: lldRunsProgram},
	"thinlto_distributor_arg":             {Value: Forward, NoRemote: lldProgramArgs},
	"thinlto_remote_compiler_arg":         {Value: Forward, NoRemote: lldProgramArgs},
	"thinlto_remote_compiler_prepend_arg": {Value: Forward, NoRemote: lldProgramArgs},
	"load_pass_plugins":                   {Value: Plugin, NoRemote: lldLoadsPlugin},

	// Arguments for LLVM: -mllvm, --plugin-opt=-<option> (an LLVM option
	// without its dash), and the --plugin-opt= that matches no other
	// (an error unless its value ends in lto-wrapper, which GCC passes).
	"mllvm":               {Value: Forward},
	"plugin_opt_eq_minus": {Value: Forward},
	"plugin_opt_eq":       {Value: Forward},
	"plugin_opt":          {Value: Forward},

	// Settings, symbols, sections, numbers and names. --plugin is
	// ignored (lld needs no LTO plugin), as are -G, -rpath-link and
	// GCC's --plugin-opt=-fresolution= and -pass-through=.
	"android_memtag_mode":                {Value: Name},
	"auxiliary":                          {Value: Name},
	"bp_compression_sort":                {Value: Name},
	"bp_startup_sort":                    {Value: Name},
	"build_id":                           {Value: Name},
	"call_graph_profile_sort":            {Value: Name},
	"color_diagnostics":                  {Value: Name},
	"compress_debug_sections":            {Value: Name},
	"compress_sections":                  {Value: Name},
	"defsym":                             {Value: Name},
	"dynamic_linker":                     {Value: Name},
	"entry":                              {Value: Name},
	"error_limit":                        {Value: Name},
	"exclude_libs":                       {Value: Name},
	"export_dynamic_symbol":              {Value: Name},
	"filter":                             {Value: Name},
	"fini":                               {Value: Name},
	"flavor":                             {Value: Name},
	"format":                             {Value: Name},
	"hash_style":                         {Value: Name},
	"image_base":                         {Value: Name},
	"init":                               {Value: Name},
	"keep_unique":                        {Value: Name},
	"lto":                                {Value: Name},
	"lto_aa_pipeline":                    {Value: Name},
	"lto_CGO":                            {Value: Name},
	"lto_known_safe_vtables":             {Value: Name},
	"lto_newpm_passes":                   {Value: Name},
	"lto_O":                              {Value: Name},
	"lto_partitions":                     {Value: Name},
	"m":                                  {Value: Name},
	"mips_got_size":                      {Value: Name},
	"O":                                  {Value: Name},
	"oformat":                            {Value: Name},
	"opt_remarks_format":                 {Value: Name},
	"opt_remarks_hotness_threshold":      {Value: Name},
	"opt_remarks_passes":                 {Value: Name},
	"orphan_handling":                    {Value: Name},
	"pack_dyn_relocs":                    {Value: Name},
	"package_metadata":                   {Value: Name},
	"plugin":                             {Value: Name},
	"plugin_opt_mcpu_eq":                 {Value: Name},
	"power10_stubs_eq":                   {Value: Name},
	"randomize_section_padding":          {Value: Name},
	"rpath":                              {Value: Name},
	"rsp_quoting":                        {Value: Name},
	"section_start":                      {Value: Name},
	"shuffle_sections":                   {Value: Name},
	"soname":                             {Value: Name},
	"sort_section":                       {Value: Name},
	"split_stack_adjust_size":            {Value: Name},
	"target2":                            {Value: Name},
	"Tbss":                               {Value: Name},
	"Tdata":                              {Value: Name},
	"Ttext":                              {Value: Name},
	"Ttext_segment":                      {Value: Name},
	"thinlto_cache_policy":               {Value: Name},
	"thinlto_jobs_eq":                    {Value: Name},
	"thinlto_object_suffix_replace_eq":   {Value: Name},
	"thinlto_prefix_replace_eq":          {Value: Name},
	"thinlto_single_module_eq":           {Value: Name},
	"threads":                            {Value: Name},
	"time_trace_granularity":             {Value: Name},
	"trace_symbol":                       {Value: Name},
	"undefined":                          {Value: Name},
	"undefined_glob":                     {Value: Name},
	"unresolved_symbols":                 {Value: Name},
	"warn_backrefs_exclude":              {Value: Name},
	"why_live":                           {Value: Name},
	"wrap":                               {Value: Name},
	"z":                                  {Value: Name},
	"anon_G":                             {Value: Name},
	"anon_rpath_link":                    {Value: Name},
	"anon_rpath_link_eq":                 {Value: Name},
	"anon_plugin_opt_eq_thinlto":         {Value: Name},
	"anon_plugin_opt_eq_fresolution_eq":  {Value: Name},
	"anon_plugin_opt_eq_pass_through_eq": {Value: Name},
}
