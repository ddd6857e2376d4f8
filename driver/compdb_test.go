package driver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func TestDeviceArgs(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		target    compileTarget
		selectOne bool
		want      []string
	}{
		{"one device keeps the selection",
			[]string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "a.c", "-o", "a.o", "-MD", "-MF", "a.d"},
			compileTarget{"x86_64-pc-linux-gnu", "x86-64"}, false,
			[]string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "a.c", "--offload-device-only"}},
		{"several devices: one selected by target ID",
			[]string{"-fopenmp", "--offload-arch=gfx90a:xnack+,sm_90", "-Xopenmp-target=nvptx64-nvidia-cuda", "-O3", "-c", "a.c", "-oa.o"},
			compileTarget{"amdgcn-amd-amdhsa", "gfx90a:xnack+"}, true,
			[]string{"-fopenmp", "-Xopenmp-target=nvptx64-nvidia-cuda", "-O3", "-c", "a.c", "--offload-device-only", "--offload-arch=gfx90a:xnack+"}},
		{"several devices: a CPU device by triple",
			[]string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu,amdgcn-amd-amdhsa", "--offload-host-only", "-c", "a.c"},
			compileTarget{"x86_64-pc-linux-gnu", "x86-64"}, true,
			[]string{"-fopenmp", "-c", "a.c", "--offload-device-only", "-fopenmp-targets=x86_64-pc-linux-gnu"}},
		{"CUDA arches",
			[]string{"-x", "cuda", "--cuda-gpu-arch=sm_80", "--cuda-gpu-arch=sm_90", "-c", "k.cu", "-objcmt-migrate-literals"},
			compileTarget{"nvptx64-nvidia-cuda", "sm_90"}, true,
			// -objcmt-migrate-literals is clang -cc1's: clang's driver reads
			// it as -o bjcmt-migrate-literals, an output.
			[]string{"-x", "cuda", "-c", "k.cu", "--offload-device-only", "--offload-arch=sm_90"}},
		{"spellings and aliases of dropped options",
			[]string{"-x", "cuda", "--offload-arch=sm_80,sm_90", "--cuda-device-only", "--output", "k.o", "-MFk.d", "-MQ", "k.o", "-c", "k.cu"},
			compileTarget{"nvptx64-nvidia-cuda", "sm_90"}, true,
			[]string{"-x", "cuda", "-c", "k.cu", "--offload-device-only", "--offload-arch=sm_90"}},
	}
	for _, tt := range tests {
		if got := deviceArgs(newestTables(), tt.args, tt.target, tt.selectOne); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestOutputOf(t *testing.T) {
	tests := []struct {
		args []string
		src  string
		n    int
		want string
	}{
		{[]string{"-c", "a.c", "-o", "x.o"}, "a.c", 1, "x.o"},
		{[]string{"-c", "dir/a.c"}, "dir/a.c", 1, "a.o"},
		{[]string{"-c", "a.c", "b.c"}, "b.c", 2, "b.o"},
		{[]string{"a.c", "b.c", "-o", "prog"}, "b.c", 2, "prog"},
		{[]string{"a.c"}, "a.c", 1, "a.out"},
		{[]string{"-c", "a.c", "-oy.o"}, "a.c", 1, "y.o"},
	}
	for _, tt := range tests {
		o, err := Parse(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := outputOf(o, tt.src, tt.n); got != tt.want {
			t.Errorf("outputOf(%q, %s) = %q, want %q", tt.args, tt.src, got, tt.want)
		}
	}
}

func TestArgsForSource(t *testing.T) {
	o, err := Parse([]string{"-fopenmp", "a.c", "-x", "c", "b.c", "lib.o", "-o", "prog"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-fopenmp", "-x", "c", "b.c", "-o", "prog"}
	if got := argsForSource(o, "b.c"); !slices.Equal(got, want) {
		t.Errorf("argsForSource = %q, want %q", got, want)
	}
}

func TestUpdateCompileCommands(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.c", "b.c", "kept.c"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	db := filepath.Join(dir, "compile_commands.json")
	// Another tool's entries, a stale one among them.
	os.WriteFile(db, []byte(fmt.Sprintf(`[
{"directory": %q, "command": "cc -c kept.c", "file": "kept.c"},
{"directory": %q, "command": "cc -c deleted.c", "file": "deleted.c"}
]`, dir, dir)), 0o644)
	entry := func(file, arch string) compileCommand {
		return compileCommand{Directory: dir, File: file, Output: "x.o", Arguments: []string{"offcc", "-c", file, arch}}
	}
	if err := updateCompileCommands(db, []compileCommand{entry("a.c", "1"), entry("a.c", "2")}); err != nil {
		t.Fatal(err)
	}
	if err := updateCompileCommands(db, []compileCommand{entry("a.c", "3")}); err != nil {
		t.Fatal(err)
	}
	// Concurrent writers, as under make -j: every entry arrives.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := entry("b.c", "")
			e.Output = fmt.Sprintf("b%d.o", i)
			if err := updateCompileCommands(db, []compileCommand{e}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(db)
	var got []map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	var files []string
	for _, e := range got {
		files = append(files, e["file"].(string))
	}
	want := []string{"kept.c", "a.c", "b.c", "b.c", "b.c", "b.c", "b.c", "b.c", "b.c", "b.c"}
	if !slices.Equal(files, want) {
		t.Errorf("files %q, want %q\n%s", files, want, data)
	}
	if got[0]["command"] != "cc -c kept.c" || got[1]["arguments"].([]any)[3] != "3" {
		t.Errorf("entries not kept or replaced as they should be:\n%s", data)
	}
	os.WriteFile(db, []byte("{"), 0o644)
	if err := updateCompileCommands(db, []compileCommand{entry("a.c", "")}); err == nil {
		t.Error("no error for a broken database")
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"a.c", "b.c", "compile_commands.json", "kept.c"}; !slices.Equal(names, want) {
		t.Errorf("directory holds %q, want %q", names, want)
	}
}
