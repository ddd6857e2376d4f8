package farm

import (
	"strings"
	"testing"

	"github.com/offcc/offcc/trust"
)

// TestClaims: a client believes a claim only when a worker key it trusts
// signed it for this job, this job entry and this worker name; an
// insecure client believes unsigned ones too.
func TestClaims(t *testing.T) {
	w, err := trust.Generate("worker")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := trust.Generate("attacker")
	ring := trust.NewKeyring(&w.PublicKey)
	const id, sum = "0123456789abcdef01234567", "aaaa"
	good := makeClaim(w, id, sum, "w1")
	if name, err := verifyClaim(ring, false, id, sum, good); err != nil || name != "w1" {
		t.Fatalf("a trusted worker's claim: %q, %v", name, err)
	}
	f := strings.Fields(good)
	for _, tc := range []struct{ name, id, sum, v string }{
		{"unsigned", id, sum, "w1"},
		{"another job", "ffffffffffffffffffffffff", sum, good},
		{"another job entry", id, "bbbb", good},
		{"another worker's name", id, sum, "w2 " + f[1] + " " + f[2]},
		{"an untrusted key", id, sum, makeClaim(other, id, sum, "w1")},
		{"malformed", id, sum, "w1 x"},
		{"bad base64", id, sum, "w1 " + f[1] + " !!!"},
		{"empty", id, sum, ""},
		{"too long", id, sum, good + strings.Repeat(" ", 300)},
	} {
		if _, err := verifyClaim(ring, false, tc.id, tc.sum, tc.v); err == nil {
			t.Errorf("%s: believed", tc.name)
		}
	}
	if name, err := verifyClaim(ring, true, id, sum, "w1"); err != nil || name != "w1" {
		t.Errorf("an insecure client: unsigned claim %q, %v", name, err)
	}
	if got := makeClaim(nil, id, sum, "w1"); got != "w1" {
		t.Errorf("a worker without a key claims as %q, want its name", got)
	}
}
