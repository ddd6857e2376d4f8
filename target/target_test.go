package target

import "testing"

func TestCompatible(t *testing.T) {
	const amd, nv, x86 = "amdgcn-amd-amdhsa", "nvptx64-nvidia-cuda", "x86_64-unknown-linux-gnu"
	for _, c := range []struct {
		name string
		a, b Target
		want bool
	}{
		{"equal", Target{amd, "gfx90a"}, Target{amd, "gfx90a"}, false},
		{"equal generic", Target{amd, "generic"}, Target{amd, "generic"}, false},
		{"generic left", Target{amd, "generic"}, Target{amd, "gfx90a"}, true},
		{"generic right", Target{nv, "sm_80"}, Target{nv, "generic"}, true},
		{"generic with no arch", Target{x86, "generic"}, Target{x86, ""}, true},
		{"generic on other triple", Target{amd, "generic"}, Target{nv, "sm_80"}, false},
		{"different triples", Target{amd, "gfx90a"}, Target{"amdgcn-amd-amdhsa-unknown", "gfx90a"}, false},
		{"feature added", Target{amd, "gfx90a"}, Target{amd, "gfx90a:xnack+"}, true},
		{"feature removed", Target{amd, "gfx90a:xnack-"}, Target{amd, "gfx90a"}, true},
		{"other feature", Target{amd, "gfx90a:xnack+"}, Target{amd, "gfx90a:sramecc-"}, true},
		{"xnack+ vs xnack-", Target{amd, "gfx90a:xnack+"}, Target{amd, "gfx90a:xnack-"}, false},
		{"xnack- vs xnack+", Target{amd, "gfx90a:xnack-"}, Target{amd, "gfx90a:xnack+"}, false},
		{"sramecc+ vs sramecc-", Target{amd, "gfx90a:sramecc+:xnack+"}, Target{amd, "gfx90a:sramecc-:xnack+"}, false},
		{"same features, other order", Target{amd, "gfx90a:sramecc+:xnack+"}, Target{amd, "gfx90a:xnack+:sramecc+"}, true},
		{"other processor", Target{amd, "gfx90a"}, Target{amd, "gfx908"}, false},
		{"other processor, features", Target{amd, "gfx90a:xnack+"}, Target{amd, "gfx908:xnack+"}, false},
		{"r600", Target{"r600-unknown-unknown", "cayman"}, Target{"r600-unknown-unknown", "cayman:xnack+"}, true},
		{"NVPTX sm_70 vs sm_80", Target{nv, "sm_70"}, Target{nv, "sm_80"}, false},
		{"NVPTX same processor", Target{nv, "sm_80"}, Target{nv, "sm_80:foo+"}, false},
		{"SPIR-V", Target{"spirv64-amd-amdhsa", "amdgcnspirv"}, Target{"spirv64-amd-amdhsa", "amdgcnspirv:xnack+"}, false},
		{"host", Target{x86, ""}, Target{x86, "znver4"}, false},
	} {
		if got := Compatible(c.a, c.b); got != c.want {
			t.Errorf("%s: Compatible(%v, %v) = %v, want %v", c.name, c.a, c.b, got, c.want)
		}
		if got := Compatible(c.b, c.a); got != c.want {
			t.Errorf("%s: Compatible(%v, %v) = %v, want %v (swapped)", c.name, c.b, c.a, got, c.want)
		}
	}
}

func TestTargetProcessorString(t *testing.T) {
	for _, c := range []struct {
		t         Target
		proc, str string
	}{
		{Target{"amdgcn-amd-amdhsa", "gfx90a:xnack+"}, "gfx90a", "amdgcn-amd-amdhsa-gfx90a:xnack+"},
		{Target{"amdgcn-amd-amdhsa", "gfx908:sramecc+:xnack-"}, "gfx908", "amdgcn-amd-amdhsa-gfx908:sramecc+:xnack-"},
		{Target{"nvptx64-nvidia-cuda", "sm_80"}, "sm_80", "nvptx64-nvidia-cuda-sm_80"},
		{Target{"amdgcn-amd-amdhsa", "generic"}, "generic", "amdgcn-amd-amdhsa-generic"},
		{Target{"x86_64-unknown-linux-gnu", ""}, "", "x86_64-unknown-linux-gnu"},
	} {
		if got := c.t.Processor(); got != c.proc {
			t.Errorf("%#v.Processor() = %q, want %q", c.t, got, c.proc)
		}
		if got := c.t.String(); got != c.str {
			t.Errorf("%#v.String() = %q, want %q", c.t, got, c.str)
		}
	}
}
