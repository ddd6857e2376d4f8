package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 10, 0},
		{"--no-cachee", "--no-cache", 10, 1},
		{"cache_sise", "cache_size", 10, 1},
		{"kitten", "sitting", 10, 3},
		{"kitten", "sitting", 2, 2},
		{"a", "abcdef", 3, 3},
		{"flaw", "lawn", 10, 2},
	} {
		if got := Distance(c.a, c.b, c.limit); got != c.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}
