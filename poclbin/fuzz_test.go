package poclbin

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
)

func FuzzParseProgram(f *testing.F) {
	f.Add(handBuilt())
	p := sampleProgram()
	p.Version = 10
	f.Add(MarshalProgram(p))
	b := MarshalProgram(sampleProgram())
	binary.LittleEndian.PutUint32(b[16:], 13)
	f.Add(b)
	f.Add(MarshalProgram(&Program{Version: 9}))
	if real, err := os.ReadFile("testdata/pocl31.poclbin"); err == nil {
		f.Add(real)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ParseProgram(in)
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		// Everything is parsed, so writing it back gives the input.
		if out := MarshalProgram(p); !bytes.Equal(out, in) {
			t.Fatalf("MarshalProgram(ParseProgram(in)) != in:\n% x\n% x", out, in)
		}
	})
}

func FuzzParseArchive(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteArchive(&buf, sampleArchive()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(rawArchive(""))
	f.Add(rawArchive("b", "a", "1", "A/b", ""))
	f.Add(rawArchive("b", "x/../y", "1"))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := ParseArchive(in)
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		var out bytes.Buffer
		if err := WriteArchive(&out, a); err != nil {
			t.Fatalf("WriteArchive of a parsed archive: %v", err)
		}
		if !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("WriteArchive(ParseArchive(in)) != in")
		}
	})
}
