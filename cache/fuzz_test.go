package cache

import (
	"testing"
)

// FuzzDecodeIndex feeds DecodeIndex arbitrary index files: it must not
// panic, and what it accepts must keep its promises (checkDecoded). Inputs
// that are a valid header followed by arbitrary bytes get past the
// checksum: the fuzzer's body is checksummed for it in half the cases.
func FuzzDecodeIndex(f *testing.F) {
	sum := SumBytes([]byte("x"))
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
	})
}
