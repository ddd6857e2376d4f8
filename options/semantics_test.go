package options

import (
	"slices"
	"strings"
	"testing"
)

// clangTables are the tables clangSemantics is laid over, in the order
// the tests look a spelling up in: cc1 (most of offcc's command lines),
// the driver, cc1as.
func clangTables() []*Table { return []*Table{ClangCC1(), ClangDriver(), ClangCC1As()} }

// typed returns the spelling an argument was typed with (an alias's own).
func typed(a *Arg) string {
	if a.Alias != nil {
		return a.Alias.Spelling
	}
	return a.Spelling
}

// parseAs parses argv[0] (and the values it takes) with t; nil when it is
// no option of t, or an option whose typed spelling is not spelled.
func parseAs(t *Table, spelled string, argv ...string) *Arg {
	a, err := t.ParseOne(argv, 0)
	if err != nil || a.IsInput() || a.IsUnknown() || typed(a) != spelled {
		return nil
	}
	return a
}

// find returns the option spelled sp in the first of clangTables that has
// it (typed alone, with a value after it, or with a value joined), and the
// table; nil if none has.
func find(sp string) (*Arg, *Table) {
	for _, t := range clangTables() {
		for _, argv := range [][]string{{sp, "v", "v", "v"}, {sp + "v"}} {
			if a := parseAs(t, sp, argv...); a != nil {
				return a, t
			}
		}
	}
	return nil, nil
}

func TestClangSemanticsIDs(t *testing.T) {
	byID := map[string]*Record{}
	for i := range clangRecords {
		byID[clangRecords[i].ID] = &clangRecords[i]
	}
	for id := range clangSemantics() {
		if byID[id] == nil {
			t.Errorf("clangSemantics lists %s, which is no option of clang's table", id)
		}
	}
	// (The aliases of a listed option have its semantics, clang-cl's
	// included; the groups list options of the three tables only.)
	for _, g := range clangGroups {
		for _, id := range g.ids {
			switch r := byID[id]; {
			case r == nil:
				t.Errorf("clangGroups: no option %s", id)
			case r.Visibility&(DefaultVis|CC1Option|CC1AsOption) == 0:
				t.Errorf("clangGroups list %s, an option of neither clang's driver, -cc1 nor -cc1as (%s)", id, r.Visibility)
			}
		}
	}
	listed, byValue, uncacheable, noRemote := map[string]bool{}, map[ValueKind]int{}, 0, 0
	for _, g := range clangGroups {
		for _, id := range g.ids {
			if !listed[id] {
				listed[id] = true
				s := clangSemantics()[id]
				byValue[s.Value]++
				if s.Uncacheable != "" {
					uncacheable++
				}
				if s.NoRemote != "" {
					noRemote++
				}
			}
		}
	}
	t.Logf("%d options listed (%d with their aliases): by value %v; %d uncacheable, %d not run on workers",
		len(listed), len(clangSemantics()), byValue, uncacheable, noRemote)
	for _, c := range clangSemanticsConflicts() {
		t.Errorf("clangGroups disagree: %s", c)
	}
}

// TestClangSemanticsRules checks the rules clangSemantics documents on
// every option of the three tables.
func TestClangSemanticsRules(t *testing.T) {
	counts := map[ValueKind]int{}
	for _, tab := range clangTables() {
		for _, o := range tab.Options() {
			id := o.ID
			switch o.Value {
			case WriteFile, WriteDir:
				if o.Uncacheable == "" && id != "o" && id != "MF" && id != "dependency_file" &&
					o.Unaliased().ID != "o" {
					t.Errorf("%s %s (%s) writes a file the job does not name, but is not uncacheable", tab.Tool, o.Spelling(), id)
				}
			}
			switch o.Value {
			case Plugin, Program, WriteFile, WriteDir:
				out := o.Unaliased().ID == "o" || o.Unaliased().ID == "dependency_file"
				if out && (o.NoRemote != "" || o.Uncacheable != "") {
					t.Errorf("%s %s (%s), a job's named output, has reasons %q, %q", tab.Tool, o.Spelling(), id, o.Uncacheable, o.NoRemote)
				}
				if !out && o.NoRemote == "" {
					t.Errorf("%s %s (%s), a %s, runs on workers", tab.Tool, o.Spelling(), id, o.Value)
				}
			}
			if o.Alias() == nil && o.Kind == Flag && o.Value != NoValue {
				t.Errorf("%s %s (%s) is a flag, but its value is a %s", tab.Tool, o.Spelling(), id, o.Value)
			}
			if o.Alias() != nil {
				if _, listed := clangSemantics()[id]; !listed {
					u := o.Unaliased()
					if o.Value != u.Value || o.Uncacheable != u.Uncacheable || o.NoRemote != u.NoRemote {
						t.Errorf("%s alias %s (%s) has other semantics than %s", tab.Tool, o.Spelling(), id, u.ID)
					}
				}
			}
			if tab == ClangCC1() || tab == ClangDriver() {
				counts[o.Value]++
			}
		}
	}
	t.Logf("driver and cc1 options (aliases included) by value: %v", counts)
}

// The hand-written tables this overlay replaces, as they were: cache/key.go's
// uncacheableArgs and searchOptions, farm/job.go's deniedOptions,
// deniedPrefixes, nameOptions and joinedNames, internal/includescan's
// inclSeparate, inclAngledOptions, inclRefused and inclRefusedPrefixes, and
// driver/jobs.go's cc1Reads.
var (
	oldUncacheableArgs = []struct{ arg, reason string }{
		{"-save-temps", "-save-temps"},
		{"-save-temps=", "-save-temps"},
		{"-ftime-trace", "-ftime-trace"},
		{"-ftime-trace=", "-ftime-trace"},
		{"-coverage-notes-file", "--coverage notes"},
		{"-coverage-notes-file=", "--coverage notes"},
		{"-split-dwarf-output", "split DWARF (.dwo) output"},
		{"-header-include-file", "-H output file"},
		{"-stats-file=", "-stats-file"},
		{"-opt-record-file", "optimization record file"},
		{"-fmodules", "clang modules"},
		{"-fmodules-cache-path=", "clang modules"},
		{"-fimplicit-module-maps", "clang modules"},
		{"-MJ", "-MJ"},
	}
	oldSearchOptions = []struct {
		opt    string
		joined bool
	}{
		{"-iquote", true}, {"-isystem-after", true}, {"-isystem", false},
		{"-internal-externc-isystem", false}, {"-internal-isystem", false},
		{"-c-isystem", true}, {"-cxx-isystem", true}, {"-objc-isystem", true},
		{"-idirafter", true}, {"-I", true},
	}
	oldDeniedOptions = []string{
		"-load", "-plugin", "-add-plugin", "-ivfsoverlay", "-working-directory",
		"-fmodules-cache-path", "-fmodule-file", "-fprebuilt-module-path", "-stats-file",
		"-opt-record-file", "-MF", "-header-include-file", "-fprofile-instrument-path",
		"-coverage-notes-file", "-coverage-data-file", "-split-dwarf-output",
		"-emit-pch", "-emit-module", "-Map", "--Map", "--reproduce", "--why-extract",
		"--dependency-file", "--script", "--version-script", "--dynamic-list",
		"--library-path", "--print-archive-stats", "--lto-obj-path", "-L", "-T",
		"-serialize-diagnostic-file", "-diagnostic-log-file", "-stack-usage-file",
		"-module-dependency-dir", "-dependency-dot", "-MJ", "--output",
	}
	oldDeniedPrefixes = []string{
		"-fpass-plugin", "-fplugin", "-load=", "--load-pass-plugin", "-load-pass-plugin",
		"-dump-", "-ast-dump", "-ftime-trace", "-save-temps", "--save-temps",
		"-fcrash-diagnostics", "-plugin-arg-",
	}
	oldNameOptions = []string{
		"-MT", "-MQ", "-main-file-name", "-resource-dir",
		"-internal-isystem", "-internal-externc-isystem", "-isystem",
		"-I", "-iquote", "-idirafter", "-isysroot",
		"-fdebug-compilation-dir", "-fcoverage-compilation-dir",
		"-dwarf-debug-flags", "-split-dwarf-file", "-triple",
		"-aux-triple", "-target-cpu", "-aux-target-cpu",
		"-tune-cpu", "-target-feature", "-target-abi", "-x",
		"-mllvm", "-D", "-U", "-m", "-flavor",
		"-ferror-limit", "-pic-level", "-mrelocation-model",
		"-debugger-tuning", "-mframe-pointer", "-stack-protector",
	}
	oldJoinedNames = []string{
		"-fdebug-compilation-dir=", "-fcoverage-compilation-dir=", "-fdebug-prefix-map=",
		"-ffile-prefix-map=", "-fmacro-prefix-map=", "-fcoverage-prefix-map=", "-I",
		"-isystem", "-iquote", "-idirafter", "-cuid=", "-D", "-U",
	}
	oldInclSeparate = []string{
		"-U", "-MQ", "-MT", "-o", "-x",
		"-add-plugin", "-analyze-function", "-analyzer-checker",
		"-analyzer-config", "-analyzer-config-compatibility-mode",
		"-analyzer-constraints", "-analyzer-disable-checker",
		"-analyzer-dump-egraph", "-analyzer-inline-max-stack-depth",
		"-analyzer-inlining-mode", "-analyzer-max-loop",
		"-analyzer-output", "-analyzer-purge", "-as-secure-log-file",
		"-ast-dump-filter", "-aux-target-cpu", "-aux-target-feature",
		"-aux-triple", "-code-completion-at",
		"-darwin-target-variant-triple", "-default-function-attr",
		"-dependency-dot", "-dependency-file", "-diagnostic-log-file",
		"-dumpdir", "-dwarf-debug-flags", "-error-on-deserialized-decl",
		"-exception-model", "-fbracket-depth", "-fconstant-string-class",
		"-fcuda-include-gpubinary", "-fdebug-compilation-dir",
		"-fdiagnostics-format", "-fdiagnostics-show-category",
		"-ferror-limit", "-fexperimental-openacc-macro-override",
		"-fopenmp-host-ir-file-path", "-ftabstop", "-ftrapv-handler",
		"-function-alignment", "-header-include-file", "-hlsl-entry",
		"-main-file-name", "-mdebug-pass", "-meabi", "-mfloat-abi",
		"-mfpmath", "-mlimit-float-precision", "-mlink-bitcode-file",
		"-mlink-builtin-bitcode", "-mllvm", "-mmlir",
		"-module-dependency-dir", "-mregparm", "-mrelocation-model",
		"-msmall-data-limit", "-mthread-model", "-mtp",
		"-object-file-name", "-opt-record-file", "-opt-record-format",
		"-opt-record-passes", "-pic-level", "-plugin",
		"-record-command-line", "-serialize-diagnostic-file",
		"-source-date-epoch", "-split-dwarf-file", "-split-dwarf-output",
		"-stack-protector", "-stack-protector-buffer-size",
		"-stack-usage-file", "-target-abi", "-target-cpu",
		"-target-feature", "-target-linker-version", "-triple",
		"-tune-cpu",
	}
	oldInclAngledOptions = []string{
		"-I", "-isystem", "-idirafter", "-internal-isystem",
		"-internal-externc-isystem", "-c-isystem", "-cxx-isystem",
		"-objc-isystem", "-objcxx-isystem",
	}
	oldInclRefused = []string{
		"-include-pch", "-chain-include", "-ast-merge", "-remap-file",
		"-load", "-vfsoverlay", "--vfsoverlay", "-ivfsoverlay",
		"-fms-compatibility", "-fcxx-modules", "-fimplicit-module-maps",
		"-fbuiltin-module-map", "-fmodules-ts",
	}
	oldCC1Reads = []string{
		"-mlink-builtin-bitcode", "-mlink-bitcode-file", "-include-pch",
		"-fprofile-instrument-use-path=", "-fprofile-sample-use=",
		"-fsanitize-ignorelist=", "-fxray-always-instrument=", "-fxray-never-instrument=",
		"-fcuda-include-gpubinary",
	}
)

// notInClang22 are spellings of the old tables that clang 22 knows in
// none of its tables: -coverage-notes-file, -fcoverage-compilation-dir,
// -debugger-tuning and -mframe-pointer are only spelled with '=' (checked
// so in TestClangSemanticsSamples), -fmodules-ts is gone.
var notInClang22 = map[string]bool{
	"-coverage-notes-file": true, "-fcoverage-compilation-dir": true, "-debugger-tuning": true,
	"-mframe-pointer": true, "-fmodules-ts": true,
}

// lldOnly are farm/job.go's spellings of ld.lld options (farm workers run
// clang -cc1 and lld), which the clang tables do not hold; clang's driver
// reads --output as -o (a job's output), and lld's -L and -T are the
// driver's too (checked).
var lldOnly = map[string]bool{
	"-Map": true, "--Map": true, "--reproduce": true, "--why-extract": true,
	"--dependency-file": true, "--script": true, "--version-script": true,
	"--dynamic-list": true, "--library-path": true, "--print-archive-stats": true,
	"--lto-obj-path": true, "--output": true, "-m": true, "-flavor": true,
	"-load=": true, "--load-pass-plugin": true, "-load-pass-plugin": true,
}

func TestOldUncacheableArgs(t *testing.T) {
	for _, u := range oldUncacheableArgs {
		a, tab := find(u.arg)
		if a == nil {
			if !notInClang22[u.arg] {
				t.Errorf("%s: no option of clang's tables", u.arg)
			}
			continue
		}
		if notInClang22[u.arg] {
			t.Errorf("%s is an option of %s after all (%s): drop it from notInClang22", u.arg, tab.Tool, a.Option.ID)
		}
		if a.Option.Uncacheable != u.reason {
			t.Errorf("%s %s (%s): uncacheable %q, cache/key.go said %q", tab.Tool, u.arg, a.Option.ID, a.Option.Uncacheable, u.reason)
		}
	}
}

func TestOldSearchOptions(t *testing.T) {
	cc1, drv := ClangCC1(), ClangDriver()
	check := func(tab *Table, spelled string, argv ...string) {
		t.Helper()
		a := parseAs(tab, spelled, argv...)
		switch {
		case a == nil:
			got, _ := tab.ParseOne(argv, 0)
			t.Errorf("%s %q: not %s (got %v)", tab.Tool, argv, spelled, got)
		case a.Option.Value != SearchDir:
			t.Errorf("%s %q: %s is a %s, not a directory searched", tab.Tool, argv, a.Option.ID, a.Option.Value)
		case a.Value() != "DIR":
			t.Errorf("%s %q: value %q", tab.Tool, argv, a.Value())
		}
	}
	for _, o := range oldSearchOptions {
		tab := cc1
		if o.opt == "-isystem-after" {
			// Only the driver has -isystem-after: cc1 reads
			// "-isystem-after DIR" as -isystem "-after" and the input
			// DIR, as clang does.
			a, _ := cc1.ParseOne([]string{"-isystem-after", "DIR"}, 0)
			if !a.Is("isystem") || a.Value() != "-after" || a.Count != 1 {
				t.Errorf("clang -cc1 -isystem-after DIR: %s %q", a.Option.ID, a.Values)
			}
			tab = drv
		}
		check(tab, o.opt, o.opt, "DIR")
		if !o.joined {
			continue
		}
		if o.opt == "-c-isystem" || o.opt == "-objc-isystem" {
			// Separate only in clang 22: cc1 rejects -c-isystemDIR
			// and reads -objc-isystemDIR as -o bjc-isystemDIR.
			if a := parseAs(cc1, o.opt, o.opt+"DIR"); a != nil {
				t.Errorf("clang -cc1 %sDIR is %s after all", o.opt, a.Option.ID)
			}
			continue
		}
		check(tab, o.opt, o.opt+"DIR")
	}
	// The forms the include scanner and the cache's keys read.
	for _, tab := range []*Table{cc1, drv} {
		check(tab, "-isystem", "-isystemDIR")
		check(tab, "-isystem", "-isystem", "DIR")
		check(tab, "-I", "-IDIR")
		check(tab, "-I", "-I", "DIR")
		check(tab, "-iquote", "-iquoteDIR")
		check(tab, "-idirafter", "-idirafterDIR")
		check(tab, "-cxx-isystem", "-cxx-isystemDIR")
		check(tab, "--embed-dir=", "--embed-dir=DIR")
		check(tab, "-F", "-FDIR")
		check(tab, "-isysroot", "-isysrootDIR")
	}
	check(cc1, "-objcxx-isystem", "-objcxx-isystem", "DIR")
	check(cc1, "-internal-isystem", "-internal-isystem", "DIR")
	check(drv, "-isystem-after", "-isystem-afterDIR")
	check(drv, "-L", "-LDIR")
	check(drv, "--sysroot=", "--sysroot=DIR")
	check(drv, "--sysroot", "--sysroot", "DIR")
}

func TestOldFarmTables(t *testing.T) {
	cc1, drv := ClangCC1(), ClangDriver()
	for _, d := range oldDeniedOptions {
		if lldOnly[d] {
			continue
		}
		found := false
		for _, tab := range []*Table{cc1, drv} {
			forms := [][]string{{d, "v"}, {d + "=v"}}
			if len(d) == 2 {
				forms = append(forms, []string{d + "v"})
			}
			for _, argv := range forms {
				a, err := tab.ParseOne(argv, 0)
				if err != nil || a.IsUnknown() || a.IsInput() || (typed(a) != d && typed(a) != d+"=") {
					continue
				}
				found = true
				if a.Option.NoRemote == "" {
					t.Errorf("%s %q (%s): runs on workers, farm/job.go denied it", tab.Tool, argv, a.Option.ID)
				}
			}
		}
		if !found && !notInClang22[d] {
			t.Errorf("farm/job.go denied %s: no option of clang's tables", d)
		}
	}
	for _, p := range oldDeniedPrefixes {
		found := 0
		for _, tab := range clangTables() {
			for _, o := range tab.Options() {
				if !slices.ContainsFunc(o.Prefixes, func(pre string) bool { return strings.HasPrefix(pre+o.Name, p) }) {
					continue
				}
				found++
				if o.NoRemote == "" {
					t.Errorf("%s %s (%s): runs on workers, farm/job.go denied the prefix %s", tab.Tool, o.Spelling(), o.ID, p)
				}
			}
		}
		if lldOnly[p] != (found == 0) {
			t.Errorf("farm/job.go's prefix %s: %d options of clang's tables", p, found)
		}
	}
	names := map[ValueKind]bool{Name: true, SearchDir: true, Macro: true, Forward: true}
	for _, n := range oldNameOptions {
		if lldOnly[n] {
			continue
		}
		a, tab := find(n)
		if a == nil {
			if !notInClang22[n] {
				t.Errorf("farm/job.go's name option %s: no option of clang's tables", n)
			}
			continue
		}
		if !names[a.Option.Value] {
			t.Errorf("%s %s (%s): value is a %s, farm/job.go said it names no file", tab.Tool, n, a.Option.ID, a.Option.Value)
		}
	}
	for _, n := range oldJoinedNames {
		var a *Arg
		for _, tab := range []*Table{cc1, drv} {
			if a = parseAs(tab, n, n+"v"); a != nil {
				break
			}
		}
		if a == nil {
			t.Errorf("farm/job.go's joined name %s: no option of clang's tables", n)
		} else if !names[a.Option.Value] || a.Value() != "v" {
			t.Errorf("%sv (%s): value %q is a %s, farm/job.go said it names no file", n, a.Option.ID, a.Value(), a.Option.Value)
		}
	}
}

func TestOldIncludeScannerTables(t *testing.T) {
	cc1 := ClangCC1()
	for _, sp := range oldInclSeparate {
		a := parseAs(cc1, sp, sp, "v")
		switch {
		case a == nil:
			t.Errorf("clang -cc1 %s v: not the option", sp)
		case a.Count != 2:
			t.Errorf("clang -cc1 %s v: %s takes %d words, internal/includescan said 2", sp, a.Option.ID, a.Count)
		case a.Option.Value == NoValue:
			t.Errorf("clang -cc1 %s (%s): value not classified", sp, a.Option.ID)
		}
	}
	for _, sp := range oldInclAngledOptions {
		if a := parseAs(cc1, sp, sp, "v"); a == nil || a.Option.Value != SearchDir {
			t.Errorf("clang -cc1 %s v: not a directory searched", sp)
		}
	}
	for _, sp := range oldInclRefused {
		a, _ := find(sp)
		if a == nil {
			if !notInClang22[sp] {
				t.Errorf("internal/includescan refused %s: no option of clang's tables", sp)
			}
			continue
		}
		if a.Option.Kind != Flag && !a.Option.Value.IsPath() {
			t.Errorf("%s (%s): value is a %s, internal/includescan refused it as a path", sp, a.Option.ID, a.Option.Value)
		}
	}
	// Samples of inclRefusedPrefixes ("-fmodule", "-fprebuilt-module-path",
	// "-F", "-vfsoverlay", "--vfsoverlay", "-load").
	for _, argv := range [][]string{
		{"-fmodule-map-file=v"}, {"-fmodule-file=v"}, {"-fmodules-cache-path=v"},
		{"-fprebuilt-module-path=v"}, {"-Fv"}, {"-F", "v"}, {"-vfsoverlayv"},
		{"--vfsoverlay=v"}, {"-load", "v"},
	} {
		a, err := cc1.ParseOne(argv, 0)
		if err != nil || !a.Option.Value.IsPath() {
			t.Errorf("clang -cc1 %q: %v, not a path", argv, a)
		}
	}
	for _, sp := range []string{"-fprebuilt-implicit-modules", "-fapinotes", "-fapinotes-modules"} {
		if parseAs(cc1, sp, sp) == nil {
			t.Errorf("clang -cc1 %s: no option", sp)
		}
	}
}

func TestOldCC1Reads(t *testing.T) {
	for _, sp := range oldCC1Reads {
		argv := []string{sp, "f"}
		if strings.HasSuffix(sp, "=") {
			argv = []string{sp + "f"}
		}
		a := parseAs(ClangCC1(), sp, argv...)
		if a == nil || a.Option.Value != ReadFile || a.Value() != "f" {
			t.Errorf("clang -cc1 %q: not a file read (%v)", argv, a)
		}
	}
}

// TestClangSemanticsSamples checks what the brief of this overlay named,
// by spelling.
func TestClangSemanticsSamples(t *testing.T) {
	for _, c := range []struct {
		value ValueKind
		spell []string
	}{
		{ReadFile, []string{"-include", "-imacros", "-include-pch", "-fprofile-instr-use=",
			"-fprofile-use=", "-fsanitize-ignorelist=", "-fxray-attr-list=", "-ivfsoverlay",
			"-fmodule-file=", "-fmodule-map-file=", "-fembed-offload-object=",
			"-fopenmp-host-ir-file-path", "-fcuda-include-gpubinary", "-T"}},
		{Name, []string{"-main-file-name", "--hip-device-lib=", "-MT", "-dumpdir",
			"-split-dwarf-file", "-save-temps=", "-fcoverage-compilation-dir=",
			"-debugger-tuning=", "-mframe-pointer="}},
		{SearchDir, []string{"--hip-device-lib-path=", "--rocm-device-lib-path=",
			"--cuda-path=", "--rocm-path=", "--hip-path=", "-resource-dir", "-isysroot",
			"--sysroot=", "-B", "--prefix=", "-iwithprefix", "-iwithprefixbefore",
			"-internal-externc-isystem", "-c-isystem", "-objc-isystem", "-L", "-F"}},
		{WriteFile, []string{"-o", "--output=", "-MF", "-dependency-file", "-MJ",
			"-header-include-file", "-serialize-diagnostic-file", "-opt-record-file",
			"-stats-file=", "-split-dwarf-output", "-coverage-notes-file=", "-ftime-trace=",
			"-diagnostic-log-file", "-stack-usage-file", "-dependency-dot"}},
		{WriteDir, []string{"-module-dependency-dir", "-fmodules-cache-path="}},
		{Plugin, []string{"-load", "-plugin", "-add-plugin", "-fpass-plugin=", "-fplugin=",
			"-fplugin-arg-", "-plugin-arg-"}},
		{Program, []string{"-fuse-ld=", "--ld-path=", "--amdgpu-arch-tool=",
			"--nvptx-arch-tool=", "--offload-arch-tool=", "-ccc-gcc-name"}},
		{Forward, []string{"-Xclang", "-mllvm", "-Wl,", "-Xlinker", "-Xarch_", "-Xarch_host",
			"-Xoffload-linker", "-Xcuda-ptxas", "-Xopenmp-target=", "-Wa,", "-Wp,"}},
		{Macro, []string{"-D", "-U"}},
	} {
		for _, sp := range c.spell {
			a, tab := find(sp)
			if a == nil {
				t.Errorf("%s: no option", sp)
			} else if a.Option.Value != c.value {
				t.Errorf("%s %s (%s): value is a %s, want a %s", tab.Tool, sp, a.Option.ID, a.Option.Value, c.value)
			}
		}
	}
}
