// Reading a clang -cc1 command line: the input, its language, the search
// directories and forced includes, and the options the scan cannot model.

package includescan

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/options"
)

// cc1Args is what a cc1 line tells the scanner.
type cc1Args struct {
	cwd        string      // the directory relative paths are relative to
	input      string      // the main input, absolute
	preprocess bool        // false for inputs clang does not preprocess (-x ir)
	quoted     []string    // -iquote directories, absolute
	angled     []string    // directories searched for "" and <> names
	embed      []string    // --embed-dir directories
	forced     []string    // -include and -imacros files, which must exist
	implicit   []string    // headers the predefines may include (default headers)
	extra      []string    // other files clang lists in its dependency file
	defs       [][2]string // -D NAME=IDENT
}

// unmodelledPrefixes are the prefixes of the IDs of modules options
// (-fmodules, -fmodule-map-file=, -fmodule-file=, -fprebuilt-module-path=,
// -fapinotes-modules ...), which the scan does not model.
var unmodelledPrefixes = []string{"fmodule", "fprebuilt", "fapinotes"}

// includePathGroups are the groups of clang's include-path options
// (-I, -i...): one parseCC1 does not handle is not modelled.
var includePathGroups = []string{"IncludePath_Group", "clang_i_Group", "i_Group"}

// parseCC1 reads a cc1 line with cc1, the option table of its clang; why
// says what it cannot model.
func parseCC1(cc1 *options.Table, args []string, cwd string) (*cc1Args, string) {
	n := len(args)
	if n < 4 || args[0] != "-cc1" {
		return nil, "not a clang -cc1 command line"
	}
	if args[n-3] != "-x" || args[n-1] == "" || args[n-1] == "-" || strings.HasPrefix(args[n-1], "-") {
		return nil, "the cc1 line does not end with -x LANG FILE"
	}
	a := &cc1Args{}
	switch lang := args[n-2]; lang {
	case "ir":
	default:
		base := lang
		for _, suf := range []string{"-cpp-output", "-header-unit-header", "-system-header", "-user-header", "-header"} {
			if b, ok := strings.CutSuffix(lang, suf); ok {
				base = b
				break
			}
		}
		switch base {
		case "c", "c++", "objective-c", "objective-c++", "cuda", "hip", "cl", "clcpp", "hlsl",
			"assembler-with-cpp", "cpp-output":
			a.preprocess = true
		default:
			return nil, fmt.Sprintf("input language %q is not modelled", lang)
		}
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return nil, fmt.Sprintf("working directory: %v", err)
		}
		cwd = abs
	}
	var quoted, angled, embed, forced, extra []string
	var workDir, resourceDir string
	sysroot := "/"
	noStdSys, noBuiltin, defaultHeader := false, false, false
	dir := func(list *[]string, opt, v string) string {
		if strings.HasPrefix(v, "=") || strings.HasPrefix(v, "$SYSROOT") {
			return fmt.Sprintf("sysroot-relative directory %s %s is not modelled", opt, v)
		}
		if v == "" {
			return fmt.Sprintf("empty directory for %s", opt)
		}
		*list = append(*list, v)
		return ""
	}
	// The options, parsed as cc1 parses them, before the final -x LANG
	// FILE: an option there that lacks its value would take them.
	opts := args[1 : n-3]
	parsed, err := cc1.Parse(opts)
	var missing *options.MissingValueError
	if errors.As(err, &missing) {
		return nil, fmt.Sprintf("option %s lacks its value", missing.Spelling)
	} else if err != nil {
		return nil, err.Error()
	}
	for _, arg := range parsed {
		o := arg.Option
		// The option as typed, for messages.
		typed := strings.Join(arg.Words(opts), " ")
		var why string
		switch {
		case arg.IsInput():
			return nil, fmt.Sprintf("unexpected positional argument %q (cc1 input not last?)", arg.Value())
		case arg.IsUnknown():
			return nil, fmt.Sprintf("clang -cc1 has no option %s", arg.Value())
		}
		switch o.ID {
		case "include_pch", "chain_include", "ast_merge", "remap_file", "load", "ivfsoverlay", "vfsoverlay",
			"fms_compatibility", "fcxx_modules", "fimplicit_module_maps", "fbuiltin_module_map",
			"F", "I_", "internal_iframework":
			// Precompiled headers and ASTs, remapped files, plugins, VFS
			// overlays, MSVC's header search rules, modules, frameworks
			// and -I- (a driver option: cc1 reads "-I-" as -I with the
			// directory "-"): the scan cannot promise a superset under
			// them.
			return nil, fmt.Sprintf("option %s is not modelled", typed)
		case "I", "isystem", "idirafter", "internal_isystem", "internal_externc_isystem",
			"c_isystem", "cxx_isystem", "objc_isystem", "objcxx_isystem":
			why = dir(&angled, arg.Spelling, arg.Value())
		case "iquote":
			why = dir(&quoted, arg.Spelling, arg.Value())
		case "embed_dir_EQ":
			why = dir(&embed, "--embed-dir", arg.Value())
		case "include", "imacros":
			forced = append(forced, arg.Value())
		case "isysroot":
			sysroot = arg.Value()
		case "working_directory":
			workDir = arg.Value()
		case "resource_dir":
			resourceDir = arg.Value()
		case "D":
			why = addDefine(a, arg.Value())
		case "nostdsysteminc":
			noStdSys = true
		case "nobuiltininc":
			noBuiltin = true
		case "finclude_default_header":
			defaultHeader = true
		case "fdepfile_entry", "fprofile_list_EQ":
			extra = append(extra, arg.Value())
		case "fsanitize_ignorelist_EQ", "fsanitize_system_ignorelist_EQ":
			// As clang, which lists only values without '='.
			if v := arg.Value(); !strings.Contains(v, "=") {
				extra = append(extra, v)
			}
		case "nostdincxx", "system_header_prefix", "no_system_header_prefix":
			// They remove directories cc1 would add itself, or change
			// which headers are system headers: the scan's
			// directories remain a superset.
		default:
			if hasAnyPrefix(o.ID, unmodelledPrefixes) {
				return nil, fmt.Sprintf("option %s is not modelled", typed)
			}
			for _, g := range includePathGroups {
				if o.InGroup(g) {
					return nil, fmt.Sprintf("option %s is not modelled", typed)
				}
			}
		}
		if why != "" {
			return nil, why
		}
	}
	if workDir != "" {
		cwd = joinPath(cwd, workDir)
	}
	a.cwd = cwd
	abs := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, p := range list {
			out = append(out, joinPath(cwd, p))
		}
		return out
	}
	a.input = joinPath(cwd, args[n-1])
	a.quoted, a.angled, a.embed, a.extra = abs(quoted), abs(angled), abs(embed), abs(extra)
	a.forced = forced
	// cc1 itself adds these for some targets (amdgcn, nvptx, spirv,
	// bare-metal ones), after the driver's; adding them always is a superset.
	root := strings.TrimSuffix(joinPath(cwd, sysroot), "/")
	if !noStdSys {
		a.angled = append(a.angled, root+"/usr/local/include")
	}
	if !noBuiltin {
		if resourceDir == "" {
			return nil, "no -resource-dir (cc1 would use its own builtin headers' directory)"
		}
		a.angled = append(a.angled, joinPath(cwd, resourceDir)+"/include")
	}
	if !noStdSys {
		a.angled = append(a.angled, root+"/usr/include")
	}
	if defaultHeader {
		a.implicit = []string{"opencl-c.h", "opencl-c-base.h", "hlsl.h"}
	}
	return a, ""
}

// hasAnyPrefix reports whether s starts with one of prefixes.
func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// addDefine records the value of -D in a when it may define an alias
// of the operators (NAME=IDENT); why is set when it uses them otherwise.
func addDefine(a *cc1Args, v string) string {
	name, body, _ := strings.Cut(v, "=")
	body = strings.TrimSpace(body)
	ident := body != "" && !strings.ContainsFunc(body, func(r rune) bool { return r >= 0x80 || !identChars[byte(r)] })
	if ident && body[0] > '9' {
		a.defs = append(a.defs, [2]string{name, body})
		return ""
	}
	if strings.Contains(v, "__has_") {
		return fmt.Sprintf("-D %s uses __has_include or __has_embed", v)
	}
	return ""
}

// joinPath returns p made absolute against dir without cleaning it (a
// ".." after a symlink is not the same as dropping both).
func joinPath(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if strings.HasSuffix(dir, "/") {
		return dir + p
	}
	return dir + "/" + p
}
