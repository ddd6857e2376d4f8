package syclbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The test vectors of FORMATS.md §3.4: full property values including the
// type tag.
var base64Vectors = []struct{ data, value string }{
	{"", "2|AAAAAAAAAAA"},
	{"spir64-unknown-unknown", "2|wCAAAAAAAAwcwlmc2QTL152au92du1Sdutmbvdnb"},
	{"spir64_gen-unknown-unknown", "2|QDAAAAAAAAwcwlmc2QzXnVmbtUnbr52b35WL152au92duB"},
	{"bmg_g21", "2|4AAAAAAAAAgYtd2XnJTM"},
}

func TestBase64Vectors(t *testing.T) {
	for _, v := range base64Vectors {
		got := string(StringValue(v.data).appendText(nil))
		if got != v.value {
			t.Errorf("encode %q = %q, want %q", v.data, got, v.value)
		}
		raw, err := DecodeBase64(strings.TrimPrefix(v.value, "2|"))
		if err != nil {
			t.Fatalf("decode %q: %v", v.value, err)
		}
		if bits := binary.LittleEndian.Uint64(raw); bits != uint64(len(v.data))*8 || string(raw[8:]) != v.data {
			t.Errorf("decode %q = bits %d data %q", v.value, bits, raw[8:])
		}
		r, err := ParsePropertySets([]byte("[s]\nk=" + v.value + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := getString(&r, "s", "k"); !ok || got != v.data {
			t.Errorf("registry value = %q, %v; want %q", got, ok, v.data)
		}
	}
}

func TestBase64FirstGroup(t *testing.T) {
	// §3.4: the group B0 00 00 gives "wCAA".
	if got := EncodeBase64([]byte{0xb0, 0, 0}); got != "wCAA" {
		t.Errorf("got %q", got)
	}
}

func TestBase64RoundTripAllLengths(t *testing.T) {
	for n := 0; n < 64; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + n*11 + 0x80)
		}
		s := EncodeBase64(b)
		if len(s) != EncodedBase64Len(n) {
			t.Fatalf("len(Encode(%d bytes)) = %d", n, len(s))
		}
		got, err := DecodeBase64(s)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("n=%d: round trip = %x, %v", n, got, err)
		}
	}
}

func TestBase64DecodeErrors(t *testing.T) {
	for _, s := range []string{"A", "AAAAA", "AA=A", "AAA-", "AB\x00C", "é"} {
		_, err := DecodeBase64(s)
		var be *Base64Error
		if !errors.As(err, &be) {
			t.Errorf("DecodeBase64(%q) err = %v, want *Base64Error", s, err)
		}
	}
}

func TestPropertySetsRoundTrip(t *testing.T) {
	var r PropertySetRegistry
	r.Add("SYCL/kernel names", "k2", UInt32Value(1))
	r.Add("SYCL/kernel names", "k1", UInt32Value(1))
	r.Add("SYCL/misc properties", "optLevel", UInt32Value(4294967295))
	r.Add("SYCL/device requirements", "aspects", BytesValue([]byte{1, 0, 0, 0, 2, 0, 0, 0}))
	r.Add("SYCL/device requirements", "odd bits", PropertyValue{Type: TypeByteArray, Bytes: []byte{0xff, 0x01}, BitLen: 9})
	r.Add("empty set", "x", StringValue(""))
	r.Sets = append(r.Sets, PropertySet{Name: "no properties"})
	r.Add("SYCL/kernel names", "k2", UInt32Value(0)) // replaces in place
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	text := r.Marshal()
	want := "[SYCL/kernel names]\nk2=1|0\nk1=1|1\n[SYCL/misc properties]\noptLevel=1|4294967295\n"
	if !strings.HasPrefix(string(text), want) {
		t.Errorf("Marshal =\n%s\nwant prefix\n%s", text, want)
	}
	got, err := ParsePropertySets(text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(r)) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
	}
	if !bytes.Equal(got.Marshal(), text) {
		t.Errorf("re-marshal differs")
	}
}

// normalize makes nil and empty byte slices compare equal.
func normalize(r PropertySetRegistry) PropertySetRegistry {
	for i := range r.Sets {
		for j := range r.Sets[i].Properties {
			if v := &r.Sets[i].Properties[j].Value; v.Bytes == nil && v.Type == TypeByteArray {
				v.Bytes = []byte{}
			}
		}
	}
	return r
}

func TestPropertySetsReaderRules(t *testing.T) {
	in := "\n\r\n[a]\r\nk=1|7\r\n\n[b]trailing]x\nv=2|AAAAAAAAAAA\n[a]\nk=1|8\nj=1|007"
	r, err := ParsePropertySets([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sets) != 2 || r.Sets[0].Name != "a" || r.Sets[1].Name != "b]trailing" {
		t.Fatalf("sets = %+v", r.Sets)
	}
	if v, _ := getUInt32(&r, "a", "k"); v != 8 {
		t.Errorf("a/k = %d, want 8 (later value wins)", v)
	}
	if v, _ := getUInt32(&r, "a", "j"); v != 7 {
		t.Errorf("a/j = %d", v)
	}
	if len(r.Sets[0].Properties) != 2 || r.Sets[0].Properties[0].Key != "k" {
		t.Errorf("a = %+v", r.Sets[0])
	}
	for _, in := range []string{"", "\n\n", "\r\n"} {
		r, err := ParsePropertySets([]byte(in))
		if err != nil || len(r.Sets) != 0 {
			t.Errorf("%q: %+v, %v", in, r, err)
		}
	}
	// Key and value keep their whitespace; '|' may appear in keys.
	r, err = ParsePropertySets([]byte("[ s ]\n a|b =1|5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := getUInt32(&r, " s ", " a|b "); !ok || v != 5 {
		t.Errorf("whitespace: %+v", r)
	}
}

func TestPropertySetsErrors(t *testing.T) {
	for _, in := range []string{
		"k=1|1\n",                  // no set
		"[a\n",                     // no ']'
		"[a]\nk\n",                 // no '='
		"[a]\n=1|1\n",              // empty key
		"[a]\nk=\n",                // empty rest
		"[a]\nk=1\n",               // no '|'
		"[a]\nk=|1\n",              // empty type
		"[a]\nk=1|\n",              // empty value
		"[a]\nk=0|1\n",             // NONE
		"[a]\nk=3|1\n",             // unknown type
		"[a]\nk=-1|1\n",            // sign
		"[a]\nk=1|4294967296\n",    // too big
		"[a]\nk=1|+1\n",            // sign
		"[a]\nk=1|12x\n",           // junk
		"[a]\nk=1|5\r",             // lone CR at EOF belongs to the value
		"[a]\nk=2|AAAAAAAAAA\n",    // prefix too short (7 bytes)
		"[a]\nk=2|A\n",             // one-char tail
		"[a]\nk=2|AAAAAAAAAA!A\n",  // bad char
		"[a]\nk=2|IAAAAAAAAAA\n",   // 8 bits claimed, no payload
		"[a]\nk=2|AAAAAAAAAAAB\n",  // payload without bits
		"[a]\nk=2|/////////////\n", // 2^64-1 bits
		"[a]\nk=1|1\x00\n",         // NUL
	} {
		_, err := ParsePropertySets([]byte(in))
		var pe *PropertySetError
		if !errors.As(err, &pe) {
			t.Errorf("%q: err = %v, want *PropertySetError", in, err)
		}
	}
	_, err := ParsePropertySets([]byte("[a]\nk=1|1\n\nbad line\n"))
	if err == nil || !strings.Contains(err.Error(), "line 4 (offset 0xb)") {
		t.Errorf("err = %v, want line 4 at offset 0xb", err)
	}
}

func TestValidate(t *testing.T) {
	bad := []PropertySetRegistry{
		{Sets: []PropertySet{{Name: "a\nb"}}},
		{Sets: []PropertySet{{Name: "a", Properties: []Property{{Key: "", Value: UInt32Value(1)}}}}},
		{Sets: []PropertySet{{Name: "a", Properties: []Property{{Key: "k=v", Value: UInt32Value(1)}}}}},
		{Sets: []PropertySet{{Name: "a", Properties: []Property{{Key: "[k", Value: UInt32Value(1)}}}}},
		{Sets: []PropertySet{{Name: "a", Properties: []Property{{Key: "k", Value: PropertyValue{}}}}}},
		{Sets: []PropertySet{{Name: "a", Properties: []Property{{Key: "k", Value: PropertyValue{Type: TypeByteArray, Bytes: []byte{1}, BitLen: 9}}}}}},
	}
	for i, r := range bad {
		if r.Validate() == nil {
			t.Errorf("%d: Validate accepted %+v", i, r)
		}
	}
}
