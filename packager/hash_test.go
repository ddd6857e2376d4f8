package packager

import "testing"

// TestHashSelfTest checks llvm::hash_value against FORMATS.md §1.7.
func TestHashSelfTest(t *testing.T) {
	for _, tc := range []struct {
		key    string
		hash   uint32
		bucket int
	}{
		{"feature", 0x907be7c2, 2},
		{"arch", 0xf386c709, 9},
		{"file", 0xd4e6b353, 19},
		{"triple", 0x0819b0d8, 24},
		{"kind", 0xc8207aa5, 37},
		{"symbols", 0x49a1f865, 37},
	} {
		h := denseMapHash(tc.key)
		if h != tc.hash || int(h%64) != tc.bucket {
			t.Errorf("hash(%q) = %#x (bucket %d), want %#x (bucket %d)", tc.key, h, h%64, tc.hash, tc.bucket)
		}
	}
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"file", "triple", "arch", "kind"}, "arch file triple kind"},
		{[]string{"file", "triple", "arch", "kind", "feature"}, "feature arch file triple kind"},
		{[]string{"file", "triple", "arch", "kind", "symbols"}, "arch file triple kind symbols"},
	} {
		got := denseMapOrder(tc.keys)
		if s := join(got); s != tc.want {
			t.Errorf("order(%v) = %s, want %s", tc.keys, s, tc.want)
		}
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
