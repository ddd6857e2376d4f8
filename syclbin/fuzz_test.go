package syclbin

import (
	"bytes"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add(Marshal(workedExample()))
	f.Add(Marshal(bigFile()))
	f.Add(Marshal(&File{}))
	f.Add([]byte("IBYS"))
	b := Marshal(bigFile())
	f.Add(put32(b, 56+20, 0))
	f.Add(b[:len(b)-9])
	f.Fuzz(func(t *testing.T, in []byte) {
		file, err := Parse(in)
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		out := Marshal(file)
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(in))): %v", err)
		}
		if !bytes.Equal(Marshal(again), out) {
			t.Fatalf("Marshal not stable after round trip")
		}
	})
}

func FuzzPropertySets(f *testing.F) {
	for _, v := range base64Vectors {
		f.Add([]byte("[SYCLBIN/ir module metadata]\ntype=1|0\ntarget=" + v.value + "\n"))
	}
	f.Add([]byte("[SYCLBIN/global metadata]\nstate=1|2\n"))
	f.Add([]byte("\r\n[a]\r\nk=1|7\r\n[b]x]\nk=2|AAAAAAAAAAA\n[a]\nk=1|8"))
	f.Add([]byte("[a]\nk=2|/////////////\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParsePropertySets(in)
		if err != nil {
			if _, ok := err.(*PropertySetError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("parsed registry does not validate: %v", err)
		}
		out := r.Marshal()
		r2, err := ParsePropertySets(out)
		if err != nil {
			t.Fatalf("reparse of %q: %v", out, err)
		}
		if !bytes.Equal(r2.Marshal(), out) {
			t.Fatalf("Marshal not stable: %q vs %q", r2.Marshal(), out)
		}
	})
}
