package target

import (
	"strings"
	"testing"
)

func FuzzNormalize(f *testing.F) {
	for _, s := range triples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Normalize(s)
		for n := 1; n <= 5; n++ {
			if got := NormalizeForm(s, n); strings.Count(got, "-") != n-1 {
				t.Fatalf("NormalizeForm(%q, %d) = %q", s, n, got)
			}
		}
		Equal(s, Normalize(s))
		IsGPU(s)
	})
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"gfx90a", "gfx90a:xnack+", "gfx908:sramecc+:xnack-", "gfx90a:xnack", "", ":", "a:b+:b-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		if id.String() != s {
			t.Fatalf("ParseID(%q).String() = %q", s, id.String())
		}
		a, b, ok := ConflictingIDs([]string{s, id.Processor, s + ":zz+"})
		if !ok || a != id.Processor || b == a {
			t.Fatalf("ConflictingIDs of %q, its processor and one more feature = %q %q %v", s, a, b, ok)
		}
	})
}
