package redisstore

import "testing"

// FuzzParseMeta feeds a blob's metadata fields, as anyone who can write to
// the server may set them, to parseMeta: it must not panic, and what it
// accepts has a positive chunk size and says compressed exactly when it
// came from the "z" field alone, with compressed bytes.
func FuzzParseMeta(f *testing.F) {
	f.Add("450 100", true, "", false)
	f.Add("", false, "5000 1234 1048576", true)
	f.Add("1 1", true, "1 1 1", true)
	f.Add("-1 100", true, "", false)
	f.Add("", false, "5000 0 100", true)
	f.Add("", false, "5000 1 99999999999", true)
	f.Add("5000  100", true, "", false)
	f.Fuzz(func(t *testing.T, raw string, rawOK bool, comp string, compOK bool) {
		if !rawOK && !compOK {
			return // not found: OpenBlob's answer before parsing
		}
		m, err := parseMeta(raw, rawOK, comp, compOK)
		if err != nil {
			return
		}
		switch {
		case m.chunk <= 0 || m.size < 0 || m.stored < 0:
			t.Fatalf("accepted %+v", m)
		case m.compressed != (compOK && !rawOK):
			t.Fatalf("compressed = %v from m %v, z %v", m.compressed, rawOK, compOK)
		case m.compressed && m.stored == 0:
			t.Fatalf("compressed with no bytes: %+v", m)
		case !m.compressed && m.stored != 0:
			t.Fatalf("stored size for a blob as it is: %+v", m)
		}
	})
}
