package cache

import (
	"testing"

	"github.com/offcc/offcc/trust"
)

// FuzzDecodeIndex feeds DecodeIndex arbitrary index files: it must not
// panic, and what it accepts must keep its promises (checkDecoded: the
// signature included). Inputs that are a valid header followed by
// arbitrary bytes get past the checksum: the fuzzer's body is checksummed
// for it in half the cases. A decoded entry verifies with the seeds' key
// only if it is a seed's entry, unchanged, under the key it was signed for.
func FuzzDecodeIndex(f *testing.F) {
	sum := SumBytes([]byte("x"))
	signer, err := trust.Generate("fuzz")
	if err != nil {
		f.Fatal(err)
	}
	ring := trust.NewKeyring(&signer.PublicKey)
	sigKey := SumBytes([]byte("signed key"))
	signedSeed := &Entry{Kind: KindResult, Record: []byte(`{"kind":"compile"}`), Blobs: []Blob{{Name: "out0", Size: 1, Sum: sum, Mode: 0o644}}}
	SignEntry(signer, sigKey, signedSeed)
	signedIndex := EncodeIndex(signedSeed)
	f.Add(signedIndex, false)
	f.Add(signedIndex[len(indexMagic)+66:], true)
	f.Add([]byte(`{"kind":"plan","record":"x","signature":{"key":"0011223344556677","ed25519":"AAAA"}}`), true)
	f.Add([]byte(`{"kind":"plan","record":"x","signature":{"key":null,"ed25519":null}}`), true)
	f.Add([]byte(`{"kind":"plan","record":"x","signature":null}`), true)
	f.Add([]byte(`{"kind":"plan","record":"x","signature":"AAAA"}`), true)
	for _, e := range []*Entry{
		{Kind: KindPlan, Record: []byte("jobs\n")},
		{Kind: KindPlan, Record: []byte("\xe9\xff")},
		{Kind: KindResult, Record: []byte(`{"kind":"compile"}`), Blobs: []Blob{
			{Name: "out0", Size: 1, Sum: sum, Mode: 0o644},
			{Name: "out1", Size: 0, Sum: SumBytes(nil), Mode: 0o755},
		}},
	} {
		data := EncodeIndex(e)
		f.Add(data, false)
		f.Add(data[len(indexMagic)+66:], true)
	}
	f.Add([]byte(`{"kind":"result","blobs":[{"name":"../x","size":1,"sha256":"`+sum.String()+`"}]}`), true)
	f.Add([]byte(`{"kind":"result","blobs":[{"name":"a","size":-1,"sha256":"`+sum.String()+`"},{"name":"a"}]}`), true)
	f.Add([]byte(`{"record":"a","record_bytes":"/w=="}`), true)
	f.Add([]byte(""), false)
	f.Fuzz(func(t *testing.T, data []byte, checksum bool) {
		if checksum {
			data = rawIndex(string(data))
		}
		e, err := DecodeIndex(data)
		if err != nil {
			if e != nil {
				t.Fatalf("DecodeIndex returned an entry and %v", err)
			}
			return
		}
		checkDecoded(t, e)
		if _, err := VerifyEntry(ring, sigKey, e); err == nil && !sameEntry(e, signedSeed) {
			t.Fatalf("an entry other than the signed one verifies: %+v", e)
		}
	})
}
