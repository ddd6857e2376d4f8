package bundler

import "testing"

// TestXXH3Value checks the hash against FORMATS.md's observed values.
func TestXXH3Value(t *testing.T) {
	for k, want := range map[string]uint32{
		"host-x86_64-unknown-linux-gnu-":           0x9ec060ac,
		"hipv4-amdgcn-amd-amdhsa--gfx90a":          0x9e394d90,
		"openmp-nvptx64-nvidia-cuda-unknown-sm_80": 0x9bdd95f1,
	} {
		if got := hashKey(k); got != want {
			t.Errorf("hashKey(%q) = %#x, want %#x", k, got, want)
		}
	}
	got := ListOrder([]Entry{{ID: "host-x86_64-unknown-linux-gnu-"}, {ID: "hipv4-amdgcn-amd-amdhsa--gfx90a"}, {ID: "openmp-nvptx64-nvidia-cuda-unknown-sm_80"}})
	want := []string{"hipv4-amdgcn-amd-amdhsa--gfx90a", "openmp-nvptx64-nvidia-cuda-unknown-sm_80", "host-x86_64-unknown-linux-gnu-"}
	for i := range want {
		if got[i].ID != want[i] {
			t.Fatalf("ListOrder = %v, want %v", got, want)
		}
	}
}
