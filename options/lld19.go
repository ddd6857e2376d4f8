package options

// ld.lld 19's ELF records, as differences from 22's (lldRecords): lld's
// Options.td is not installed, so, as 22's, they are written by hand and
// checked against the installed ld.lld 19.1.7 (lld19_test.go: its --help,
// every spelling run through it, and each spelling said absent). No
// option was removed between them: the option spellings in ld.lld 19's
// binary (strings(1)) are all in 22's, and 19's --help shows each option
// as 22's record does.

// lld19Absent are the IDs of lldRecords that ld.lld 19 does not have
// (LLVM 20 to 22 added them).
var lld19Absent = []string{
	"bp_compression_sort", "bp_compression_sort_startup_functions", "bp_startup_sort",
	"no_bp_compression_sort_startup_functions", "verbose_bp_section_orderer", "irpgo_profile", "irpgo_profile_eq",
	"branch_to_branch", "no_branch_to_branch",
	"xosegment", "no_xosegment",
	"print_gc_sections_eq", "randomize_section_padding",
	"thinlto_distributor_arg", "thinlto_distributor_arg_eq", "thinlto_distributor_eq",
	"thinlto_remote_compiler_arg", "thinlto_remote_compiler_arg_eq", "thinlto_remote_compiler_eq",
	"thinlto_remote_compiler_prepend_arg", "thinlto_remote_compiler_prepend_arg_eq",
	"why_live", "why_live_eq",
	"anon_plugin_opt_eq_time_trace_eq",
}
