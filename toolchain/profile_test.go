package toolchain

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// withDefaults makes each profile's DefaultDir a directory of dirs (by
// major; a missing one names nothing) for the test, so that Find's
// search does not meet the machine's own LLVM installations.
func withDefaults(t *testing.T, dirs map[int]string) {
	t.Helper()
	saved := profiles
	t.Cleanup(func() { profiles = saved })
	profiles = nil
	for _, p := range saved {
		c := *p
		c.DefaultDir = dirs[p.Major]
		if c.DefaultDir == "" {
			c.DefaultDir = filepath.Join(t.TempDir(), "nothing")
		}
		profiles = append(profiles, &c)
	}
}

func TestProfiles(t *testing.T) {
	p22, p19 := ProfileOf(22), ProfileOf(19)
	if p22 == nil || p19 == nil || ProfileOf(17) != nil || ProfileOf(23) != nil {
		t.Fatalf("ProfileOf: 22 %v, 19 %v, 17 %v, 23 %v", p22, p19, ProfileOf(17), ProfileOf(23))
	}
	if Preferred() != p22 || !p22.Drives || !p19.Drives || !p22.Plans || p19.Plans {
		t.Errorf("preferred %d; drives 22 %v, 19 %v; plans 22 %v, 19 %v", Preferred().Major, p22.Drives, p19.Drives, p22.Plans, p19.Plans)
	}
	if len(p22.Shapes) != 0 || !slices.Equal(p19.Shapes, []Shape{ShapePlainCompile, ShapeOpenMPCompile, ShapeOpenMPHostLink, ShapeCUDACompile, ShapeHIPCompile, ShapeCUDARDCCompile, ShapeHIPRDCCompile}) {
		t.Errorf("shapes: 22 %q, 19 %q", p22.Shapes, p19.Shapes)
	}
	for _, p := range Profiles() {
		if p.DefaultDir != "/usr/lib/llvm-"+strconv.Itoa(p.Major)+"/bin" || !strings.Contains(p.InstallHint, "clang-"+strconv.Itoa(p.Major)+" ") {
			t.Errorf("LLVM %d: default %s, hint %s", p.Major, p.DefaultDir, p.InstallHint)
		}
	}
	if p22.Packager != "llvm-offload-binary" || p19.Packager != "clang-offload-packager" ||
		!p22.StableNames || p19.StableNames || !p22.SYCLBIN || p19.SYCLBIN ||
		p22.Wrapper != Wrapper22 || p19.Wrapper != Wrapper19 || p19.OffloadEntry != "{ ptr, ptr, i64, i32, i32 }" {
		t.Errorf("22: %+v\n19: %+v", p22, p19)
	}
	if got := releases(func(*Profile) bool { return true }); got != "19 and 22" {
		t.Errorf("known releases %q", got)
	}
	saved := profiles
	defer func() { profiles = saved }()
	profiles = append(profiles, &Profile{Major: 18})
	if got := releases(func(*Profile) bool { return true }); got != "18, 19 and 22" {
		t.Errorf("three releases %q", got)
	}
}

// TestFindProfile: the profile is the found release's, however the
// directory was found.
func TestFindProfile(t *testing.T) {
	bin := fakeLLVM(t, "22", "")
	for _, e := range []map[string]string{nil, {EnvLLVMDir: bin}, {"PATH": bin}} {
		explicit := ""
		if e == nil {
			explicit = bin
		}
		if e["PATH"] != "" {
			os.Symlink("clang", filepath.Join(bin, "clang-22"))
		}
		l, err := Find(explicit, env(e))
		if err != nil || l.Profile != ProfileOf(22) || l.Major != 22 {
			t.Errorf("Find(%q, %v) = %+v, %v", explicit, e, l, err)
		}
	}
}

// withUndriven makes the profile of major one offcc knows but does not
// drive, for the test.
func withUndriven(t *testing.T, major int) {
	t.Helper()
	saved := profiles
	t.Cleanup(func() { profiles = saved })
	profiles = nil
	for _, p := range saved {
		c := *p
		if c.Major == major {
			c.Drives = false
		}
		profiles = append(profiles, &c)
	}
}

// TestFindRefusesRelease: a release offcc knows but does not drive, and
// one it has no profile for, are refused in one line naming what offcc
// knows and drives, however they were found.
func TestFindRefusesRelease(t *testing.T) {
	withDefaults(t, nil)
	b19 := fakeLLVM(t, "19", "-19")
	b17 := fakeLLVM(t, "17", "")
	l, err := Find(b17, env(nil))
	if want := "found LLVM 17 in " + b17 + "; offcc drives LLVM 19 and 22; install LLVM 22 with: apt-get install clang-22 "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Find(%q) = %+v, %v; want %q", b17, l, err, want)
	}
	withUndriven(t, 19)
	for _, c := range []struct {
		explicit string
		env      map[string]string
		want     string
	}{
		{b19, nil, "found LLVM 19 in " + b19 + "; offcc does not drive LLVM 19 yet (it knows the release, not its job shapes) and drives LLVM 22; install LLVM 22 with: apt-get install clang-22 "},
		{"", map[string]string{"PATH": "/nonexistent:" + b19}, "found LLVM 19 in " + b19 + "; offcc does not drive LLVM 19 yet"},
		{"", map[string]string{EnvLLVMDir: b17}, "found LLVM 17 in " + b17 + "; offcc knows LLVM 19 and 22 and drives LLVM 22; install LLVM 22 with: apt-get install clang-22 "},
	} {
		l, err := Find(c.explicit, env(c.env))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Find(%q, %v) = %+v, %v; want %q", c.explicit, c.env, l, err, c.want)
		}
	}
}

// TestFindDrivenFirst: on PATH and among the default directories, a
// release offcc drives is found before one it only knows, whatever the
// order of PATH; the one it knows is found (and refused) when it is the
// only one.
func TestFindDrivenFirst(t *testing.T) {
	b19 := fakeLLVM(t, "19", "-19")
	b22 := fakeLLVM(t, "22", "-22")
	withDefaults(t, nil)
	l, err := Find("", env(map[string]string{"PATH": b19 + ":" + b22}))
	if err != nil || l.Bin != b22 || l.Profile.Major != 22 {
		t.Errorf("PATH with clang-19 before clang-22: %+v, %v", l, err)
	}
	withDefaults(t, map[int]string{19: b19, 22: b22})
	l, err = Find("", env(map[string]string{"PATH": "/nonexistent"}))
	if err != nil || l.Bin != b22 {
		t.Errorf("default directories: %+v, %v", l, err)
	}
	withDefaults(t, map[int]string{19: b19})
	if l, err := Find("", env(nil)); err != nil || l.Bin != b19 || l.Profile != ProfileOf(19) {
		t.Errorf("only LLVM 19's default directory: %+v, %v", l, err)
	}
	withUndriven(t, 19)
	if _, err := Find("", env(nil)); err == nil || !strings.Contains(err.Error(), "found LLVM 19 in "+b19+"; offcc does not drive LLVM 19 yet") {
		t.Errorf("only the default directory of LLVM 19, not driven: %v", err)
	}
	withDefaults(t, nil)
	_, err = Find("", env(nil))
	if err == nil || !strings.HasPrefix(err.Error(), "LLVM 22 not found (looked in ") || !strings.Contains(err.Error(), "install it with: apt-get install clang-22 ") {
		t.Errorf("nothing: %v", err)
	}
}

// TestFindSharedResourceDir is Debian's /usr/bin: clang-19 and clang-22
// beside each other, over a /usr/lib/clang holding both releases. Found
// through clang-22 it is LLVM 22 with the -22 tools; found through
// clang-19 alone it is LLVM 19, not the newest resource directory's.
func TestFindSharedResourceDir(t *testing.T) {
	withDefaults(t, nil)
	bin := fakeLLVM(t, "19", "-19")
	os.MkdirAll(filepath.Join(bin, "..", "lib", "clang", "22"), 0o755)
	if l, err := Find("", env(map[string]string{"PATH": bin})); err != nil || l.Major != 19 || l.Clang() != filepath.Join(bin, "clang-19") {
		t.Errorf("through clang-19: %+v, %v", l, err)
	}
	touch(t, filepath.Join(bin, "clang-22"))
	touch(t, filepath.Join(bin, "llc-22"))
	touch(t, filepath.Join(bin, "llc-19"))
	l, err := Find("", env(map[string]string{"PATH": bin}))
	if err != nil || l.Major != 22 || l.Clang() != filepath.Join(bin, "clang-22") || l.Tool("llc") != filepath.Join(bin, "llc-22") {
		t.Errorf("through clang-22: %+v, %v", l, err)
	}
}

// TestShapeChecksCUID: the CUDA and HIP shapes carry a compile unit ID
// offcc checks; the OpenMP and plain ones do not.
func TestShapeChecksCUID(t *testing.T) {
	for _, s := range []Shape{ShapeCUDACompile, ShapeHIPCompile, ShapeCUDARDCCompile, ShapeHIPRDCCompile} {
		if !s.ChecksCUID() {
			t.Errorf("%s: ChecksCUID false", s)
		}
	}
	for _, s := range []Shape{ShapePlainCompile, ShapeOpenMPCompile, ShapeOpenMPHostLink, ""} {
		if s.ChecksCUID() {
			t.Errorf("%q: ChecksCUID true", s)
		}
	}
}
