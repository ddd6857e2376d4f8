package options

import (
	"fmt"
	"sync"
)

// clangSemantics is what offcc knows of clang's options beyond clang's
// table, by option ID (driver, -cc1 and -cc1as options alike): what their
// values name, which make a job uncacheable and which never run on a farm
// worker. It is built from clangGroups by buildSemantics, which adds a
// rule of its own: every option whose value is a Plugin, a Program, a
// WriteFile or a WriteDir has a NoRemote reason (a default one for its
// kind where its group gives none), except -o and -dependency-file, the
// outputs a farm job names. An alias has the semantics of the option it
// stands for, unless it is listed itself (see newOptionSet).
//
// An option not listed, nor an alias of one, has NoValue: it is a flag,
// or its value is a setting that names nothing on disk as far as offcc
// knows, it does not stop a job from being cached and it may run on a
// worker. Options whose value is a setting are listed as Name where offcc
// relies on it (the value of a separate option that is no path).
//
// The rule for Uncacheable: an option that writes a file or a directory
// the job does not name as its output (every WriteFile and WriteDir option
// but -o, -MF and -dependency-file), or that makes clang do so (-save-temps,
// -fmodules, --coverage, -gsplit-dwarf...), makes the job uncacheable: the
// cache would not restore what it wrote. The reasons are counted, so
// options that write the same kind of file share one.
func clangSemantics() map[string]Semantics { return clangSemanticsBuilt().sem }

// clangSemanticsConflicts lists where clangGroups disagree (a test fails
// on any).
func clangSemanticsConflicts() []string { return clangSemanticsBuilt().conflicts }

// clangSemanticsBuilt builds clangSemantics once, the first time a table
// of clang's is made.
var clangSemanticsBuilt = sync.OnceValue(func() (b struct {
	sem       map[string]Semantics
	conflicts []string
}) {
	b.sem, b.conflicts = buildSemantics(clangGroups)
	return b
})

// semGroup gives the options ids the same semantics.
type semGroup struct {
	value       ValueKind
	uncacheable string
	noRemote    string
	ids         []string
}

// clangGroups are offcc's knowledge of clang's options. An ID may be in
// several groups (a value kind in one, a reason in another), as long as
// they do not disagree.
var clangGroups = []semGroup{
	// --- Files read -------------------------------------------------

	// Files the preprocessor and the front end read.
	{value: ReadFile, ids: []string{
		"include", "imacros", "include_pch", "chain_include", "ast_merge",
		"remap_file", // "<from>;<to>": the contents of <to> replace <from>
		"fmodule_map_file", "fmodules_embed_file_EQ", "fbuild_session_file",
		"warning_suppression_mappings_EQ", "foverride_record_layout_EQ",
		"extract_api_ignores_EQ", "config",
	}},
	// Files the code generator reads: bitcode linked in, offload images,
	// profiles, sanitizer and instrumentation lists, ThinLTO indexes.
	{value: ReadFile, ids: []string{
		"mlink_builtin_bitcode", "mlink_bitcode_file", "fcuda_include_gpubinary",
		"fopenmp_host_ir_file_path", "fembed_offload_object_EQ", "fthinlto_index_EQ",
		// (-fprofile-use= and -fprofile-instr-use= also take the
		// directory of a default.profdata.)
		"fprofile_instr_use_EQ", "fprofile_use_EQ", "fprofile_instrument_use_path_EQ",
		"fprofile_sample_use_EQ", "fprofile_remapping_file_EQ", "fprofile_list_EQ",
		"fmemory_profile_use_EQ", "fcodegen_data_use_EQ",
		"fsanitize_ignorelist_EQ", "fsanitize_system_ignorelist_EQ",
		"fsanitize_coverage_allowlist", "fsanitize_coverage_ignorelist",
		"fexperimental_sanitize_metadata_ignorelist_EQ",
		"fxray_always_instrument", "fxray_never_instrument", "fxray_attr_list",
		"frandomize_layout_seed_file_EQ", "fms_secure_hotpatch_functions_file",
		"gpu_instrument_lib_EQ",
	}},
	// Files the driver hands to the linker, or reads for it.
	{value: ReadFile, noRemote: "linker script", ids: []string{"T"}},
	{value: ReadFile, ids: []string{
		"Zlinker_input", "multi_lib_config", "filelist",
		"exported__symbols__list", "unexported__symbols__list", "force__load",
		"bundle__loader", "seg__addr__table", "reexport_library", "weak__library",
		"lazy__library",
	}},
	// Files that redirect other reads, or whose contents depend on files
	// the job does not ship: farm workers never read them.
	{value: ReadFile, noRemote: "VFS overlay maps files the job does not ship",
		ids: []string{"ivfsoverlay", "vfsoverlay"}},
	// (-fmodule-file='s value is [<name>=]<file>.)
	{value: ReadFile, noRemote: "prebuilt modules are not shipped", ids: []string{"fmodule_file"}},

	// --- Directories searched ---------------------------------------

	// Header search directories.
	{value: SearchDir, ids: []string{
		"I", "isystem", "iquote", "idirafter", "internal_isystem",
		"internal_externc_isystem", "internal_iframework", "c_isystem", "cxx_isystem",
		"objc_isystem", "objcxx_isystem", "isystem_after", "stdlibxx_isystem",
		"iwithprefix", "iwithprefixbefore", "iprefix", "iwithsysroot", "iframework",
		"iframeworkwithsysroot", "F", "embed_dir_EQ", "iapinotes_modules",
		"mzos_sys_include_EQ",
	}},
	// Roots the driver and the front end find headers, libraries and
	// tools under.
	{value: SearchDir, ids: []string{
		"isysroot", "_sysroot_EQ", "resource_dir",
		"gcc_install_dir_EQ", "gcc_toolchain", "config_system_dir_EQ", "config_user_dir_EQ",
		"cuda_path_EQ", "rocm_path_EQ", "hip_path_EQ", "rocm_device_lib_path_EQ",
		"hipstdpar_path_EQ", "hipstdpar_prim_path_EQ", "hipstdpar_thrust_path_EQ",
		// A bitcode library, or a directory it is found in.
		"libomptarget_amdgpu_bc_path_EQ", "libomptarget_nvptx_bc_path_EQ",
		"libomptarget_spirv_bc_path_EQ",
		"_dyld_prefix_EQ",
	}},
	// -B is a directory (or a file-name prefix) searched for the programs
	// clang runs (as, ld) as well as for libraries and data files: its
	// value names no program, so it is a SearchDir, never run on workers.
	// -ccc-install-dir (where clang pretends to be installed) likewise.
	{value: SearchDir, noRemote: "finds the programs clang runs", ids: []string{"B", "ccc_install_dir"}},
	{value: SearchDir, noRemote: "searches library directories the job does not ship", ids: []string{"L"}},
	{value: SearchDir, noRemote: "prebuilt modules are not shipped", ids: []string{"fprebuilt_module_path"}},
	{value: SearchDir, noRemote: "relative paths resolve against another directory", ids: []string{"working_directory"}},

	// --- Files and directories written ------------------------------

	// The outputs a job names: cacheable, and run on workers.
	{value: WriteFile, ids: []string{"o", "dependency_file"}},
	// The driver's dependency file: cc1 writes it as -dependency-file.
	{value: WriteFile, ids: []string{"MF"}},
	// Files written beside the outputs (see the rule above).
	{value: WriteFile, uncacheable: "-MJ", ids: []string{"MJ"}},
	{value: WriteFile, uncacheable: "-H output file", ids: []string{"header_include_file"}},
	{value: WriteFile, uncacheable: "-stats-file", ids: []string{"stats_file"}},
	{value: WriteFile, uncacheable: "optimization record file", ids: []string{"opt_record_file", "foptimization_record_file_EQ"}},
	{value: WriteFile, uncacheable: "split DWARF (.dwo) output", ids: []string{"split_dwarf_output"}},
	{value: WriteFile, uncacheable: "--coverage notes", ids: []string{
		"anonymous_2106", // -coverage-notes-file=
	}},
	// -ftime-trace=: the JSON file, or a directory for it.
	{value: WriteFile, uncacheable: "-ftime-trace", ids: []string{"ftime_trace_EQ"}},
	{value: WriteFile, uncacheable: "clang modules", ids: []string{"fmodule_output_EQ"}},
	{value: WriteFile, uncacheable: "serialized diagnostics file", ids: []string{"diagnostic_serialized_file", "_serialize_diags"}},
	{value: WriteFile, uncacheable: "diagnostic log file", ids: []string{"diagnostic_log_file"}},
	{value: WriteFile, uncacheable: "stack usage file", ids: []string{"stack_usage_file"}},
	{value: WriteFile, uncacheable: "dependency graph file", ids: []string{"dependency_dot"}},
	{value: WriteFile, uncacheable: "secure log file", ids: []string{"as_secure_log_file"}},
	{value: WriteFile, uncacheable: "analyzer graph dump", ids: []string{"analyzer_dump_egraph"}},
	{value: WriteFile, uncacheable: "minimization hints file", ids: []string{"dump_minimization_hints"}},
	{value: WriteFile, uncacheable: "ThinLTO thin-link bitcode", ids: []string{"fthin_link_bitcode_EQ"}},
	{value: WriteFile, uncacheable: "debug info preservation report", ids: []string{"fverify_debuginfo_preserve_export"}},
	{value: WriteFile, uncacheable: "process statistics report", ids: []string{"fproc_stat_report_EQ"}},
	{value: WriteFile, uncacheable: "codegen data file", ids: []string{"fcodegen_data_generate_EQ"}},
	{value: WriteDir, uncacheable: "clang modules", ids: []string{"fmodules_cache_path"}},
	{value: WriteDir, uncacheable: "module dependency directory", ids: []string{"module_dependency_dir"}},
	{value: WriteDir, uncacheable: "symbol graph directory", ids: []string{"symbol_graph_dir_EQ"}},
	{value: WriteDir, uncacheable: "dSYM directory", ids: []string{"dsym_dir"}},
	{value: WriteDir, uncacheable: "compilation database fragment", ids: []string{"gen_cdb_fragment_path"}},
	// Written only when clang crashes.
	{value: WriteDir, uncacheable: "crash reproducers", ids: []string{"fcrash_diagnostics_dir"}},

	// Options without a path that make clang write files beside the
	// outputs.
	{value: Name, uncacheable: "-save-temps", noRemote: "-save-temps", ids: []string{
		"save_temps_EQ", // cwd or obj; -save-temps is its alias
	}},
	{uncacheable: "-ftime-trace", ids: []string{"ftime_trace"}},
	{uncacheable: "clang modules", ids: []string{"fmodules", "fimplicit_module_maps", "fmodule_output"}},
	{uncacheable: "--coverage notes", ids: []string{"coverage", "ftest_coverage"}},
	{uncacheable: "optimization record file", ids: []string{"fsave_optimization_record"}},
	{value: Name, uncacheable: "optimization record file", ids: []string{"fsave_optimization_record_EQ"}},
	// (-gsplit-dwarf=single writes no .dwo file, but the value is not
	// looked at.)
	{uncacheable: "split DWARF (.dwo) output", ids: []string{"gsplit_dwarf"}},
	{value: Name, uncacheable: "split DWARF (.dwo) output", ids: []string{"gsplit_dwarf_EQ"}},
	{value: Name, uncacheable: "-stats-file", ids: []string{"save_stats_EQ"}},
	{uncacheable: "stack usage file", ids: []string{"fstack_usage"}},

	// --- Code loaded, programs run ----------------------------------

	// Plugins (-plugin, -add-plugin and the -plugin-arg- options name a
	// plugin that a -load or -fplugin= loads).
	{value: Plugin, ids: []string{
		"load", "plugin", "add_plugin", "plugin_arg", "fplugin_EQ", "fplugin_arg",
		"fpass_plugin_EQ", "hipspv_pass_plugin_EQ",
	}},
	// Programs the driver runs (-fuse-ld= also takes a linker's flavour,
	// "lld", which the driver looks up).
	{value: Program, ids: []string{
		"fuse_ld_EQ", "ld_path_EQ", "offload_arch_tool_EQ", "ccc_gcc_name",
		"ptxas_path_EQ", "dxc_validator_path_EQ", "fuse_lipo_EQ", "fthinlto_distributor_EQ",
		// Aliases of --offload-arch-tool= in LLVM 22, options of their
		// own in 19.
		"amdgpu_arch_tool_EQ", "nvptx_arch_tool_EQ",
	}},

	// --- Arguments for other tools, macros ---------------------------

	{value: Forward, ids: []string{
		"Xclang", "mllvm", "mmlir", "Wl_COMMA", "Wa_COMMA", "Wp_COMMA", "Xlinker",
		"Xassembler", "Xpreprocessor", "Xanalyzer", "Xarch__", "Xarch_device",
		"Xarch_host", "Xclangas", "Xcuda_fatbinary", "Xcuda_ptxas", "Xoffload_linker",
		"Xopenmp_target", "Xopenmp_target_EQ", "Xthinlto_distributor_EQ", "z", "b",
	}},
	{value: Macro, ids: []string{"D", "U"}},

	// --- Names ------------------------------------------------------

	// Paths recorded in the outputs, or written by the compiled program
	// when it runs, but neither read nor written by clang.
	{value: Name, ids: []string{
		"main_file_name", "split_dwarf_file", "object_file_name_EQ", "dumpdir",
		"fdebug_compilation_dir_EQ", "fcoverage_compilation_dir_EQ",
		"ffile_compilation_dir_EQ", "fdebug_prefix_map_EQ", "ffile_prefix_map_EQ",
		"fmacro_prefix_map_EQ", "fcoverage_prefix_map_EQ", "dwarf_debug_flags",
		"record_command_line", "fdepfile_entry", "code_completion_at",
		"fmodules_user_build_path", "fprofile_dir", "fprofile_generate_EQ",
		"fprofile_instr_generate_EQ", "fcs_profile_generate_EQ", "fmemory_profile_EQ",
		"fprofile_generate_cold_function_coverage_EQ", "print_file_name_EQ",
		"print_prog_name_EQ", "seg__addr__table__filename",
	}},
	// Libraries by name, searched for in directories.
	{value: Name, ids: []string{"l", "framework", "weak__framework", "lazy__framework",
		"reexport_framework", "hip_device_lib_EQ", "libclc_lib_EQ", "imultilib"}},
	// Profile files the compiled program writes: the farm refuses them.
	{value: Name, noRemote: "names the program's profile output", ids: []string{
		"anonymous_2104", // -coverage-data-file=
		"fprofile_instrument_path_EQ",
	}},
	// Targets, languages, modes, numbers and symbols.
	{value: Name, ids: []string{
		"triple", "aux_triple", "darwin_target_variant_triple", "target", "target_cpu",
		"aux_target_cpu", "tune_cpu", "target_feature", "aux_target_feature",
		"target_abi", "target_linker_version", "x", "MT", "MQ", "cuid_EQ", "std_EQ",
		"ferror_limit", "pic_level", "mrelocation_model", "mcmodel_EQ",
		"debugger_tuning_EQ", "mframe_pointer_EQ", "stack_protector",
		"stack_protector_buffer_size", "source_date_epoch", "fmodule_name_EQ",
		"fmodule_feature", "exception_model", "fbracket_depth", "fconstant_string_class",
		"fdiagnostics_format", "fdiagnostics_show_category", "openacc_macro_override",
		"ftabstop", "ftrapv_handler", "function_alignment", "hlsl_entrypoint",
		"mdebug_pass", "meabi", "mfloat_abi", "mfpmath", "mlimit_float_precision",
		"mregparm", "msmall_data_limit", "mthread_model", "mtp", "opt_record_format",
		"opt_record_passes", "default_function_attr", "error_on_deserialized_pch_decl",
		"analyze_function", "analyzer_checker", "analyzer_config",
		"analyzer_config_compatibility_mode", "analyzer_constraints",
		"analyzer_disable_checker", "analyzer_inline_max_stack_depth",
		"analyzer_inlining_mode", "analyzer_max_loop", "analyzer_output",
		"analyzer_purge", "filetype", "defsym", "dwarf_debug_producer", "linker_option",
		"u", "e",
	}},

	// --- What else a farm worker does not run -----------------------

	{noRemote: "builds a precompiled header", ids: []string{"emit_pch"}},
	{noRemote: "builds a module", ids: []string{"emit_module"}},
	{noRemote: "implicit module builds write the module cache", ids: []string{"fmodules"}},
	{noRemote: "AST dump", ids: []string{
		"ast_dump", "ast_dump_EQ", "ast_dump_all", "ast_dump_all_EQ",
		"ast_dump_decl_types", "ast_dump_lookups",
	}},
	{value: Name, noRemote: "AST dump", ids: []string{"ast_dump_filter"}},
	{noRemote: "debugging dump", ids: []string{
		"dump_coverage_mapping", "dump_deserialized_pch_decls", "dump_raw_tokens",
		"dump_tokens",
	}},
	{noRemote: "-ftime-trace", ids: []string{"ftime_trace", "ftime_trace_verbose"}},
	{value: Name, noRemote: "-ftime-trace", ids: []string{"ftime_trace_granularity_EQ"}},
	{value: Name, noRemote: "crash reproducers", ids: []string{"fcrash_diagnostics_EQ"}},
}

// defaultNoRemote is the NoRemote reason of an option whose value is of
// the kind and whose group gives none.
var defaultNoRemote = map[ValueKind]string{
	Plugin:    "loads a plugin",
	Program:   "runs a program the job does not ship",
	WriteFile: "writes a file the job does not name",
	WriteDir:  "writes into a directory the job does not name",
}

// jobOutputs are the options whose value is an output a farm job names.
var jobOutputs = map[string]bool{"o": true, "dependency_file": true}

// semanticsOf is buildSemantics(groups)[id] (listed reports whether id
// is there), without building the map: a process that parses a command
// line or two asks for a few dozen options.
func semanticsOf(groups []semGroup, id string) (s Semantics, listed bool) {
	for gi := range groups {
		g := &groups[gi]
		for _, gid := range g.ids {
			if gid != id {
				continue
			}
			listed = true
			if g.value != NoValue {
				s.Value = g.value
			}
			if g.uncacheable != "" {
				s.Uncacheable = g.uncacheable
			}
			if g.noRemote != "" {
				s.NoRemote = g.noRemote
			}
		}
	}
	if d := defaultNoRemote[s.Value]; listed && d != "" && s.NoRemote == "" && !jobOutputs[id] {
		s.NoRemote = d
	}
	return s, listed
}

// buildSemantics merges the groups into semantics by ID, applies the
// rules of clangSemantics, and returns with them where two groups
// disagree on an ID.
func buildSemantics(groups []semGroup) (map[string]Semantics, []string) {
	sem := make(map[string]Semantics, 512)
	var conflicts []string
	set := func(id, what string, field *string, v string) {
		if v == "" {
			return
		}
		if *field != "" && *field != v {
			conflicts = append(conflicts, fmt.Sprintf("%s: %s %q and %q", id, what, *field, v))
		}
		*field = v
	}
	for _, g := range groups {
		for _, id := range g.ids {
			s := sem[id]
			if g.value != NoValue {
				if s.Value != NoValue && s.Value != g.value {
					conflicts = append(conflicts, fmt.Sprintf("%s: value %s and %s", id, s.Value, g.value))
				}
				s.Value = g.value
			}
			set(id, "uncacheable", &s.Uncacheable, g.uncacheable)
			set(id, "noRemote", &s.NoRemote, g.noRemote)
			sem[id] = s
		}
	}
	for id, s := range sem {
		if d := defaultNoRemote[s.Value]; d != "" && s.NoRemote == "" && !jobOutputs[id] {
			s.NoRemote = d
			sem[id] = s
		}
	}
	return sem, conflicts
}
