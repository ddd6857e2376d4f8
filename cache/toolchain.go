package cache

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// PlanVersion salts every plan key: changing what a key covers changes it.
const PlanVersion = "offcc plan v3"

// VolatileEnv lists variables that change from run to run without changing
// clang's jobs or any job's output.
var VolatileEnv = map[string]bool{
	"MAKEFLAGS": true, "MFLAGS": true, "MAKELEVEL": true, "MAKE_TERMOUT": true,
	"MAKE_TERMERR": true, "TMPDIR": true, "_": true, "SHLVL": true, "OLDPWD": true, "PWD": true,
	"OFFCC_TRACE": true, "OFFCC_CACHE": true, "OFFCC_CACHE_DIR": true, "OFFCC_CACHE_SIZE": true,
	"OFFCC_CACHE_DEBUG": true, "OFFCC_JOB_TRACE": true, "OFFCC_COMPILE_COMMANDS": true,
}

// PlanKeyText describes, one "name value..." line per fact, everything clang's
// job list for this invocation depends on; key hashes it. It reports false
// when clang or the working directory cannot be found.
//
// What clang finds on disk is keyed by content, not by directory
// modification times: installing an unrelated tool beside clang must not
// invalidate the cache, and a change two levels down (a new GCC version
// directory) must. The facts:
//
//   - clang: the executable's resolved path and identity (size, mtime,
//     device, inode), and the same for the libclang-cpp and libLLVM shared
//     libraries it loads, which hold the driver when clang is built
//     shared (Debian: a 130 KB clang, and libclang-cpp22 may be upgraded
//     without clang-22). These are the one input keyed by identity rather
//     than bytes: hashing some 200 MB per run would cost more than the
//     clang start the cache saves, and a package upgrade replaces the
//     files, changing their inode and mtime (and usually size).
//   - configuration files: the bytes of every *.cfg file in the
//     directories clang searches, and of --config files (keyConfig).
//   - GCC installations: the version directories under every gcc and
//     gcc-cross triple directory clang searches, whether each has
//     crtbegin.o, and the libstdc++ header versions (keyGCC).
//   - ROCm and CUDA installations (keyOffload).
//   - the working directory, argv0, every argument and the environment
//     less VolatileEnv.
func PlanKeyText(clang, argv0 string, args, env []string) (string, bool) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	f, ok := NewPlanFacts(clang, argv0, args, env)
	if !ok {
		return "", false
	}
	return f.Text(cwd, args, env), true
}

// PlanFacts are the facts of a plan key that do not come from the command
// line as written: clang, its libraries, and the configuration files and
// installations it finds (see PlanKeyText). Text joins them with the
// working directory, the arguments and the environment, so that one
// invocation can be keyed as it is and with placeholders for where it
// runs while reading the disk once.
type PlanFacts struct {
	argv0      string
	head, tail string
}

// NewPlanFacts reads the facts for an invocation of clang as argv0 with
// args and env: the files are found from the arguments as written. It
// reports false when clang cannot be found.
func NewPlanFacts(clang, argv0 string, args, env []string) (*PlanFacts, bool) {
	exe, err := filepath.EvalSymlinks(clang)
	if err != nil {
		return nil, false
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return nil, false
	}
	fi, err := os.Stat(exe)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	var head keyText
	head.add("version", PlanVersion)
	head.add("clang", exe, fileIdentity(fi))
	for _, lib := range DriverLibraries(exe) {
		head.add("library", lib...)
	}
	getenv := map[string]string{}
	sorted := append([]string{}, env...)
	sort.Strings(sorted)
	for _, kv := range sorted {
		name, value, _ := strings.Cut(kv, "=")
		getenv[name] = value
	}
	var tail keyText
	exeDir := filepath.Dir(exe)
	tail.keyConfig(exeDir, argv0, args, getenv)
	tail.keyGCC(exeDir, args)
	tail.keyOffload(exeDir, args, getenv)
	return &PlanFacts{argv0: argv0, head: head.String(), tail: tail.String()}, true
}

// Text returns the key text of the facts with the working directory cwd,
// the arguments args and the environment env (less VolatileEnv), each
// keyed as given: PlanKeyText passes them as they are, the plan cache
// with placeholders where a plan does not depend on their values.
func (f *PlanFacts) Text(cwd string, args, env []string) string {
	var k keyText
	k.WriteString(f.head)
	k.add("cwd", cwd)
	k.add("argv0", f.argv0)
	for _, a := range args {
		k.add("arg", a)
	}
	sorted := append([]string{}, env...)
	sort.Strings(sorted)
	for _, kv := range sorted {
		name, _, _ := strings.Cut(kv, "=")
		if !VolatileEnv[name] {
			k.add("env", kv)
		}
	}
	k.WriteString(f.tail)
	return k.String()
}

// keyText accumulates PlanKeyText. Values are quoted, so that no value can
// forge another line.
type keyText struct{ strings.Builder }

func (k *keyText) add(name string, values ...string) { writeKeyLine(&k.Builder, name, values...) }

// keyLineWriter is where writeKeyLine writes: a keyText's builder, or a
// buffered hash for key text that is only hashed (commandResultKey).
type keyLineWriter interface {
	io.StringWriter
	io.ByteWriter
}

// writeKeyLine writes one line of key text: name, then each value quoted.
func writeKeyLine(w keyLineWriter, name string, values ...string) {
	w.WriteString(name)
	for _, v := range values {
		w.WriteByte(' ')
		writeQuoted(w, v)
	}
	w.WriteByte('\n')
}

// writeQuoted writes strconv.Quote(v): directly when v is printable ASCII
// without a quote or a backslash, which Quote leaves as it is.
func writeQuoted(w keyLineWriter, v string) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			w.WriteString(strconv.Quote(v))
			return
		}
	}
	w.WriteByte('"')
	w.WriteString(v)
	w.WriteByte('"')
}

// fileIdentity describes a file that changes whenever a package manager
// replaces it, without reading it.
func fileIdentity(fi os.FileInfo) string {
	id := fmt.Sprintf("size=%d mtime=%d", fi.Size(), fi.ModTime().UnixNano())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id += fmt.Sprintf(" dev=%d ino=%d", st.Dev, st.Ino)
	}
	return id
}

// fileDigestText returns the SHA-256 of a file's bytes, or why there are none.
func fileDigestText(name string) string {
	data, err := os.ReadFile(name)
	if err != nil {
		if os.IsNotExist(err) {
			return "absent"
		}
		return "unreadable"
	}
	sum := sha256.Sum256(data)
	return "sha256=" + hex.EncodeToString(sum[:])
}

// existsText says whether name exists.
func existsText(name string) string {
	if _, err := os.Stat(name); err != nil {
		return "absent"
	}
	return "present"
}

// DriverLibraries returns, for each libclang*/libLLVM* library the clang
// executable needs (its ELF DT_NEEDED entries), the name, path and identity
// of the file the dynamic loader would pick: from its RUNPATH/RPATH
// ($ORIGIN expanded), else the usual system directories. A statically
// linked clang has none.
func DriverLibraries(exe string) [][]string {
	needed, runpath := elfDynamic(exe)
	var dirs []string
	for _, p := range runpath {
		for _, d := range filepath.SplitList(p) {
			d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", "$ORIGIN"), "$ORIGIN", filepath.Dir(exe))
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, "/lib64", "/usr/lib64", "/lib/"+multiarch(), "/usr/lib/"+multiarch(), "/lib", "/usr/lib")
	var libs [][]string
	for _, name := range needed {
		if !strings.HasPrefix(name, "libclang") && !strings.HasPrefix(name, "libLLVM") {
			continue
		}
		lib := []string{name, "absent"}
		for _, d := range dirs {
			path := filepath.Join(d, name)
			if fi, err := os.Stat(path); err == nil {
				lib = []string{name, path, fileIdentity(fi)}
				break
			}
		}
		libs = append(libs, lib)
	}
	return libs
}

// elfDynamics memoises elfDynamic in the process, by path and identity:
// the plan cache and the build cache both ask for clang's libraries.
var elfDynamics sync.Map // elfDynamicKey -> [2][]string

type elfDynamicKey struct{ name, identity string }

// elfDynamic returns an ELF file's DT_NEEDED entries and its DT_RUNPATH
// and DT_RPATH entries (memoised; the slices must not be changed).
func elfDynamic(name string) (needed, runpath []string) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, nil
	}
	k := elfDynamicKey{name, fileIdentity(fi)}
	if v, ok := elfDynamics.Load(k); ok {
		r := v.([2][]string)
		return r[0], r[1]
	}
	needed, runpath = readELFDynamic(name)
	elfDynamics.Store(k, [2][]string{needed, runpath})
	return needed, runpath
}

// readELFDynamic returns an ELF file's DT_NEEDED entries and its
// DT_RUNPATH and DT_RPATH entries, reading its dynamic section once
// (elf.File's DynString reads it per tag).
func readELFDynamic(name string) (needed, runpath []string) {
	f, err := elf.Open(name)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	ds := f.SectionByType(elf.SHT_DYNAMIC)
	if ds == nil || int(ds.Link) >= len(f.Sections) {
		return nil, nil
	}
	dyn, err := ds.Data()
	if err != nil {
		return nil, nil
	}
	strtab, err := f.Sections[ds.Link].Data()
	if err != nil {
		return nil, nil
	}
	str := func(off uint64) string {
		if off >= uint64(len(strtab)) {
			return ""
		}
		s := strtab[off:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return string(s)
	}
	size := 16
	if f.Class == elf.ELFCLASS32 {
		size = 8
	}
	for ; len(dyn) >= size; dyn = dyn[size:] {
		var tag, val uint64
		if size == 16 {
			tag, val = f.ByteOrder.Uint64(dyn), f.ByteOrder.Uint64(dyn[8:])
		} else {
			tag, val = uint64(f.ByteOrder.Uint32(dyn)), uint64(f.ByteOrder.Uint32(dyn[4:]))
		}
		switch elf.DynTag(tag) {
		case elf.DT_NULL:
			return needed, runpath
		case elf.DT_NEEDED:
			needed = append(needed, str(val))
		case elf.DT_RUNPATH, elf.DT_RPATH:
			runpath = append(runpath, str(val))
		}
	}
	return needed, runpath
}

// multiarch returns the Debian multiarch directory name for this machine.
func multiarch() string {
	switch arch := runtime.GOARCH; arch {
	case "amd64":
		return "x86_64-linux-gnu"
	case "arm64":
		return "aarch64-linux-gnu"
	case "ppc64le":
		return "powerpc64le-linux-gnu"
	case "riscv64":
		return "riscv64-linux-gnu"
	default:
		return arch + "-linux-gnu"
	}
}

// argValues returns the values of a clang option in args: "NAME=VALUE"
// and, if separate, "NAME VALUE".
func argValues(args []string, name string, separate bool) []string {
	var vals []string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			vals = append(vals, v)
		} else if separate && a == name && i+1 < len(args) {
			vals = append(vals, args[i+1])
		}
	}
	return vals
}

// hasArg reports whether args holds the flag name.
func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name {
			return true
		}
	}
	return false
}

// keyConfig keys the configuration files clang may read.
//
// Clang 22 searches, in this order, the user directory, the system
// directory and its own directory for <triple>-<mode>.cfg,
// <triple>-<name>.cfg, then <mode>.cfg (else <name>.cfg) and <triple>.cfg,
// where mode is clang, clang++, clang-cpp, ..., name is the program name
// from argv0 less a target prefix (offcc, offcc++) and triple the effective
// target (from --target, -m32, the argv0 prefix, normalised). Rather than
// repeat that computation, every *.cfg file in those directories is keyed:
// one directory listing each, and the files are few and small. The user and
// system directories are build settings (CLANG_CONFIG_FILE_USER_DIR and
// _SYSTEM_DIR, empty in Debian's clang 22, which searches only its own
// directory); ~/.config/clang and /etc/clang, the usual choices, are keyed
// as well, and --config-user-dir= and --config-system-dir= when given.
// --no-default-config or CLANG_NO_DEFAULT_CONFIG turn the search off;
// --config files are keyed either way. Files a configuration file includes
// (@file) are not followed.
func (k *keyText) keyConfig(exeDir, argv0 string, args []string, getenv map[string]string) {
	var dirs []string
	dirs = append(dirs, argValues(args, "--config-user-dir", false)...)
	dirs = append(dirs, argValues(args, "--config-system-dir", false)...)
	if home := getenv["HOME"]; home != "" {
		dirs = append(dirs, filepath.Join(home, ".config", "clang"))
	}
	dirs = append(dirs, "/etc/clang")
	if hasArg(args, "-no-canonical-prefixes") {
		// Clang's directory is then argv0's, looked up in PATH if need be.
		if d := argv0Dir(argv0, getenv["PATH"]); d != "" {
			dirs = append(dirs, d)
		}
	} else {
		dirs = append(dirs, exeDir)
	}
	dirs = uniqClean(dirs)

	for _, cfg := range argValues(args, "--config", true) {
		if strings.ContainsRune(cfg, filepath.Separator) {
			k.add("config", cfg, fileDigestText(cfg))
			continue
		}
		for _, d := range dirs {
			name := filepath.Join(d, cfg)
			k.add("config", name, fileDigestText(name))
		}
	}
	if hasArg(args, "--no-default-config") || getenv["CLANG_NO_DEFAULT_CONFIG"] != "" {
		return
	}
	for _, d := range dirs {
		// Names only: clang's directory holds a hundred or more.
		f, err := os.Open(d)
		if err != nil {
			continue // no directory: no configuration files
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		var cfgs []string
		for _, n := range names {
			if strings.HasSuffix(n, ".cfg") {
				cfgs = append(cfgs, n)
			}
		}
		sort.Strings(cfgs)
		for _, n := range cfgs {
			name := filepath.Join(d, n)
			k.add("config", name, fileDigestText(name))
		}
	}
}

// argv0Dir returns the directory clang takes as its own under
// -no-canonical-prefixes: argv0's if it names an existing file, else that of
// the first PATH entry holding it.
func argv0Dir(argv0, path string) string {
	if _, err := os.Stat(argv0); err == nil {
		if abs, err := filepath.Abs(argv0); err == nil {
			return filepath.Dir(abs)
		}
	}
	if strings.ContainsRune(argv0, filepath.Separator) {
		return ""
	}
	for _, d := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(d, argv0)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return d
		}
	}
	return ""
}

// uniqClean returns list cleaned, without repeats, in order.
func uniqClean(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		s = filepath.Clean(s)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// keyGCC keys the GCC installations clang may pick its C++ library, crt
// files and libstdc++ headers from. Clang searches the prefixes <clang's
// directory>/.. and /usr (with --sysroot: SYSROOT, SYSROOT/usr and <clang's
// directory>/..), or only the --gcc-toolchain, each in lib, lib32, lib64
// and libx32, for gcc/<triple>/<version> and gcc-cross/<triple>/<version>
// directories holding crtbegin.o, and takes the newest version that fits
// the target. Keyed here, for every one of those prefixes (a superset of
// those the arguments select): the version directory names under each
// triple directory, whether each holds crtbegin.o, its subdirectory names
// (the multilibs: 32, x32, ...), and the names under PREFIX/include/c++
// (the libstdc++ headers clang looks for by version). --gcc-install-dir
// names the installation directly: whether it exists and holds crtbegin.o.
func (k *keyText) keyGCC(exeDir string, args []string) {
	prefixes := []string{filepath.Join(exeDir, ".."), "/usr"}
	for _, s := range argValues(args, "--sysroot", true) {
		prefixes = append(prefixes, s, filepath.Join(s, "usr"))
	}
	for _, g := range argValues(args, "--gcc-toolchain", false) {
		prefixes = append(prefixes, g, filepath.Join(g, "usr"))
	}
	for _, p := range uniqClean(prefixes) {
		for _, lib := range []string{"lib", "lib32", "lib64", "libx32"} {
			for _, sub := range []string{"gcc", "gcc-cross"} {
				k.keyGCCRoot(filepath.Join(p, lib, sub))
			}
		}
		cxx := filepath.Join(p, "include", "c++")
		if names := dirNames(cxx, allNames); names != nil {
			k.add("libstdc++", append([]string{cxx}, names...)...)
		}
	}
	for _, d := range argValues(args, "--gcc-install-dir", false) {
		k.add("gcc-install-dir", d, existsText(d), "crtbegin.o "+existsText(filepath.Join(d, "crtbegin.o")))
	}
}

// keyGCCRoot keys ROOT/<triple>/<version> directories.
func (k *keyText) keyGCCRoot(root string) {
	for _, triple := range dirNames(root, dirsOrLinks) {
		tdir := filepath.Join(root, triple)
		for _, version := range dirNames(tdir, dirsOrLinks) {
			vdir := filepath.Join(tdir, version)
			k.add("gcc", tdir, version, "crtbegin.o "+existsText(filepath.Join(vdir, "crtbegin.o")), "subdirs "+strings.Join(dirNames(vdir, dirsOnly), ","))
		}
	}
}

// What dirNames lists.
const (
	allNames    = iota
	dirsOrLinks // directories and symbolic links (not followed: no stat per entry)
	dirsOnly
)

// dirNames returns the sorted names of the entries of dir that what
// selects, or nil if dir cannot be read.
func dirNames(dir string, what int) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	names := []string{}
	for _, e := range entries {
		switch {
		case what == dirsOnly && !e.IsDir():
			continue
		case what == dirsOrLinks && !e.IsDir() && e.Type()&os.ModeSymlink == 0:
			continue
		}
		names = append(names, e.Name())
	}
	return names
}

// keyOffload keys the ROCm and CUDA installations clang takes device
// libraries (and HIP and CUDA headers) from for offload targets: a job list
// names files inside them, so an upgrade that moves them must miss.
// Clang looks for ROCm in --rocm-path, --hip-path, ROCM_PATH or HIP_PATH if
// given, else beside itself, in its resource directory, the newest
// /opt/rocm-*, /opt/rocm, /usr/local and /usr (amdgcn/bitcode, and
// share/hip/version or bin/.hipVersion for HIP); for CUDA in --cuda-path,
// else beside itself, /usr/local/cuda, /usr/local/cuda-X.Y and /usr/lib/cuda.
// Keyed: the rocm* names in /opt and cuda* names in /usr/local with their
// link targets, where the paths given in arguments and the environment
// lead, and for each candidate root which of the device library
// directories exist, and the HIP version files' bytes.
func (k *keyText) keyOffload(exeDir string, args []string, getenv map[string]string) {
	for _, p := range []struct{ dir, prefix string }{{"/opt", "rocm"}, {"/usr/local", "cuda"}} {
		entries, _ := os.ReadDir(p.dir)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), p.prefix) {
				continue
			}
			name := filepath.Join(p.dir, e.Name())
			target := "not a link"
			if e.Type()&os.ModeSymlink != 0 {
				target, _ = os.Readlink(name)
			}
			k.add("toolkit", name, target)
		}
	}
	var given []string
	for _, opt := range []string{"--rocm-path", "--hip-path", "--cuda-path"} {
		given = append(given, argValues(args, opt, false)...)
	}
	for _, env := range []string{"ROCM_PATH", "HIP_PATH"} {
		if v := getenv[env]; v != "" {
			given = append(given, v)
		}
	}
	given = append(given, argValues(args, "--rocm-device-lib-path", false)...)
	if v := getenv["HIP_DEVICE_LIB_PATH"]; v != "" {
		given = append(given, v)
	}
	for _, r := range given {
		k.add("toolkit-given", r, resolveText(r))
	}
	prefix := filepath.Join(exeDir, "..")
	roots := []string{prefix}
	for _, v := range dirNames(filepath.Join(prefix, "lib", "clang"), dirsOrLinks) {
		roots = append(roots, filepath.Join(prefix, "lib", "clang", v))
	}
	roots = append(roots, given...)
	roots = append(roots, "/opt/rocm", "/usr/local", "/usr", "/usr/local/cuda", "/usr/lib/cuda")
	for _, r := range uniqClean(roots) {
		k.add("toolkit-root", r,
			"amdgcn/bitcode "+existsText(filepath.Join(r, "amdgcn", "bitcode")),
			"nvvm/libdevice "+existsText(filepath.Join(r, "nvvm", "libdevice")),
			"share/hip/version "+fileDigestText(filepath.Join(r, "share", "hip", "version")),
			"bin/.hipVersion "+fileDigestText(filepath.Join(r, "bin", ".hipVersion")))
	}
}

// resolveText returns where name leads after symbolic links, or "absent".
func resolveText(name string) string {
	r, err := filepath.EvalSymlinks(name)
	if err != nil {
		return "absent"
	}
	return r
}
