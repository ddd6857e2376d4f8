package ompinfo

import "testing"

func TestInodeNamed(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{"", false},
		{"__omp_offloading_deadf17e_ee56e146_main_l6.region_id", false},
		{"x.__omp_offloading_deadf17e_ee56e146_main_l6\x00__omp_offloading_deadf17e_1_f_l2", false},
		{"__omp_offloading_fe00_98400d_main_l4", true},
		{"__omp_offloading_deadf17e_1_a_l1 __omp_offloading_803_2b_b_l9", true},
		// Section and symbol names that are no kernel names.
		{"__start_omp_offloading_entries llvm_offload_entries __omp_offloading_entries_begin", false},
		{"__omp_offloading_", false},
		{"__omp_offloading_fe00", false},
		{"__omp_offloading_fe00_", false},
		{"__omp_offloading_fe00_zz", false},
	} {
		if got := InodeNamed([]byte(c.data)); got != c.want {
			t.Errorf("InodeNamed(%q) = %v, want %v", c.data, got, c.want)
		}
	}
}

func FuzzInodeNamed(f *testing.F) {
	f.Add([]byte("__omp_offloading_fe00_98400d_main_l4"))
	f.Add([]byte("__omp_offloading_deadf17e_1_a_l1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		InodeNamed(data) // must not panic
	})
}
