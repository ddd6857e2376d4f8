package tempname

import (
	"regexp"
	"testing"
)

func TestHex6(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{6}$`)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		h := Hex6()
		if !re.MatchString(h) {
			t.Fatalf("Hex6() = %q, want six lowercase hex digits", h)
		}
		seen[h] = true
	}
	if len(seen) < 90 {
		t.Errorf("only %d distinct names in 100", len(seen))
	}
}
