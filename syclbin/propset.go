package syclbin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// PropertyType is the type tag of a property value in the registry text.
type PropertyType uint32

// Property value types. Type 0 (NONE) exists in LLVM but is never written and
// is rejected on read.
const (
	TypeUInt32    PropertyType = 1 // decimal 32-bit unsigned integer
	TypeByteArray PropertyType = 2 // Base64-variant byte array with a u64 bit-length prefix
)

// PropertyValue is one property value: a UINT32 or a BYTE_ARRAY.
type PropertyValue struct {
	Type   PropertyType
	UInt32 uint32 // the value when Type is TypeUInt32
	Bytes  []byte // the payload when Type is TypeByteArray (without the length prefix)
	// BitLen is the bit length stored in a byte array's prefix. Zero means
	// 8·len(Bytes). A reader takes ceil(BitLen/8) payload bytes.
	BitLen uint64
}

// UInt32Value returns a UINT32 property value.
func UInt32Value(v uint32) PropertyValue { return PropertyValue{Type: TypeUInt32, UInt32: v} }

// BytesValue returns a BYTE_ARRAY property value holding b (bit length 8·len(b)).
func BytesValue(b []byte) PropertyValue { return PropertyValue{Type: TypeByteArray, Bytes: b} }

// StringValue returns a BYTE_ARRAY property value holding the bytes of s, as
// LLVM stores strings such as target triples.
func StringValue(s string) PropertyValue { return BytesValue([]byte(s)) }

// Bits returns the bit length a byte array is written with.
func (v PropertyValue) Bits() uint64 {
	if v.BitLen != 0 {
		return v.BitLen
	}
	return uint64(len(v.Bytes)) * 8
}

// appendText appends "<type>|<value>" as PropertySetIO writes it.
func (v PropertyValue) appendText(dst []byte) []byte {
	dst = strconv.AppendUint(dst, uint64(v.Type), 10)
	dst = append(dst, '|')
	switch v.Type {
	case TypeUInt32:
		dst = strconv.AppendUint(dst, uint64(v.UInt32), 10)
	default:
		raw := make([]byte, 8, 8+len(v.Bytes))
		binary.LittleEndian.PutUint64(raw, v.Bits())
		raw = append(raw, v.Bytes...)
		dst = append(dst, EncodeBase64(raw)...)
	}
	return dst
}

// Property is one key and its value.
type Property struct {
	Key   string
	Value PropertyValue
}

// PropertySet is a named, ordered list of properties.
type PropertySet struct {
	Name       string
	Properties []Property
}

// Get returns the value of key in s.
func (s *PropertySet) Get(key string) (PropertyValue, bool) {
	for _, p := range s.Properties {
		if p.Key == key {
			return p.Value, true
		}
	}
	return PropertyValue{}, false
}

// PropertySetRegistry is LLVM's util::PropertySetRegistry: property sets and
// their keys in insertion order. The zero value is an empty registry.
type PropertySetRegistry struct {
	Sets []PropertySet
}

// Set returns the set called name, or nil.
func (r *PropertySetRegistry) Set(name string) *PropertySet {
	for i := range r.Sets {
		if r.Sets[i].Name == name {
			return &r.Sets[i]
		}
	}
	return nil
}

// Get returns the value of key in the set called set.
func (r *PropertySetRegistry) Get(set, key string) (PropertyValue, bool) {
	if s := r.Set(set); s != nil {
		return s.Get(key)
	}
	return PropertyValue{}, false
}

// Add sets key in the set called set to v, creating the set at the end if it
// is new. An existing key keeps its position and takes the new value, as with
// LLVM's MapVector.
func (r *PropertySetRegistry) Add(set, key string, v PropertyValue) {
	s := r.Set(set)
	if s == nil {
		r.Sets = append(r.Sets, PropertySet{Name: set})
		s = &r.Sets[len(r.Sets)-1]
	}
	for i := range s.Properties {
		if s.Properties[i].Key == key {
			s.Properties[i].Value = v
			return
		}
	}
	s.Properties = append(s.Properties, Property{Key: key, Value: v})
}

// Validate reports whether r can be written as text that parses back to r:
// names without line breaks or NULs, set names not empty of meaning to the
// parser, keys non-empty, without '=' and not starting with '[', known types,
// and byte arrays whose bit length fits their payload.
func (r *PropertySetRegistry) Validate() error {
	bad := func(s string) bool { return strings.ContainsAny(s, "\n\x00") }
	for i, s := range r.Sets {
		if bad(s.Name) {
			return fmt.Errorf("property set %d %q: name contains a newline or NUL", i, s.Name)
		}
		for _, p := range s.Properties {
			switch {
			case p.Key == "" || bad(p.Key) || strings.Contains(p.Key, "=") || p.Key[0] == '[':
				return fmt.Errorf("property set %q key %q: keys must be non-empty, without newline, NUL or '=', and not start with '['", s.Name, p.Key)
			case p.Value.Type != TypeUInt32 && p.Value.Type != TypeByteArray:
				return fmt.Errorf("property set %q key %q: unsupported type %d", s.Name, p.Key, p.Value.Type)
			case p.Value.Type == TypeByteArray && payloadLen(p.Value.Bits()) != uint64(len(p.Value.Bytes)):
				return fmt.Errorf("property set %q key %q: bit length %d does not match %d payload bytes", s.Name, p.Key, p.Value.Bits(), len(p.Value.Bytes))
			}
		}
	}
	return nil
}

// payloadLen is ceil(bits/8) without overflow.
func payloadLen(bits uint64) uint64 {
	n := bits / 8
	if bits%8 != 0 {
		n++
	}
	return n
}

// Marshal writes r as PropertySetIO text: for each set "[name]\n", then
// "key=type|value\n" per property, in insertion order, with no escaping and
// no trailing NUL. An empty registry gives zero bytes. Use Validate first for
// registries not produced by ParsePropertySets.
func (r *PropertySetRegistry) Marshal() []byte {
	var out []byte
	for _, s := range r.Sets {
		out = append(out, '[')
		out = append(out, s.Name...)
		out = append(out, ']', '\n')
		for _, p := range s.Properties {
			out = append(out, p.Key...)
			out = append(out, '=')
			out = p.Value.appendText(out)
			out = append(out, '\n')
		}
	}
	return out
}

// PropertySetError reports a malformed property-set registry.
type PropertySetError struct {
	Line   int // 1-based line number
	Offset int // byte offset of the line's start in the registry text
	Reason string
	Err    error // underlying error (e.g. *Base64Error), if any
}

func (e *PropertySetError) Error() string {
	s := fmt.Sprintf("property set registry line %d (offset %#x): %s", e.Line, e.Offset, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *PropertySetError) Unwrap() error { return e.Err }

// maxQuoted limits how much of a bad line an error message repeats.
const maxQuoted = 64

func quote(b []byte) string {
	if len(b) > maxQuoted {
		return strconv.Quote(string(b[:maxQuoted])) + "..."
	}
	return strconv.Quote(string(b))
}

// ParsePropertySets parses PropertySetIO text as LLVM's
// PropertySetRegistry::read does: blank lines are skipped; lines end in "\n"
// or "\r\n"; a line starting with '[' opens a set whose name runs to the
// last ']' (a repeated name reopens that set); other lines are split at the
// first '=' and then the first '|' into non-empty key, type and value.
// UINT32 values are decimal and must fit in 32 bits; BYTE_ARRAY values are
// Base64-variant data whose u64 bit-length prefix must match the payload
// exactly. A repeated key replaces the earlier value in place.
//
// Differences from LLVM, all stricter or documented: an input with no set
// at all (including empty input) yields an empty registry, as the SYCL
// runtime does, unless it holds a property line; NUL bytes are rejected
// (LLVM's line iterator silently stops at one); UINT32 values that do not fit
// are rejected rather than truncated.
func ParsePropertySets(b []byte) (PropertySetRegistry, error) {
	var r PropertySetRegistry
	setIndex := map[string]int{}
	var keyIndex []map[string]int
	cur := -1
	line := 0
	for pos := 0; pos < len(b); {
		line++
		start := pos
		nl := bytes.IndexByte(b[pos:], '\n')
		var text []byte
		if nl < 0 {
			text, pos = b[pos:], len(b)
		} else {
			text, pos = b[pos:pos+nl], pos+nl+1
			text = bytes.TrimSuffix(text, []byte{'\r'})
		}
		if len(text) == 0 {
			continue
		}
		perr := func(format string, args ...any) error {
			return &PropertySetError{Line: line, Offset: start, Reason: fmt.Sprintf(format, args...)}
		}
		if i := bytes.IndexByte(text, 0); i >= 0 {
			return PropertySetRegistry{}, perr("NUL byte in line")
		}
		if text[0] == '[' {
			end := bytes.LastIndexByte(text, ']')
			if end < 0 {
				return PropertySetRegistry{}, perr("set header without ']': %s", quote(text))
			}
			name := string(text[1:end])
			i, ok := setIndex[name]
			if !ok {
				i = len(r.Sets)
				setIndex[name] = i
				r.Sets = append(r.Sets, PropertySet{Name: name})
				keyIndex = append(keyIndex, map[string]int{})
			}
			cur = i
			continue
		}
		if cur < 0 {
			return PropertySetRegistry{}, perr("property outside any set: %s", quote(text))
		}
		key, rest, ok := bytes.Cut(text, []byte{'='})
		if !ok || len(key) == 0 || len(rest) == 0 {
			return PropertySetRegistry{}, perr("invalid property line: %s", quote(text))
		}
		typ, val, ok := bytes.Cut(rest, []byte{'|'})
		if !ok || len(typ) == 0 || len(val) == 0 {
			return PropertySetRegistry{}, perr("invalid property value: %s", quote(rest))
		}
		t, err := parseDecimal(typ)
		if err != nil || t > 2 {
			return PropertySetRegistry{}, perr("invalid property type %s", quote(typ))
		}
		var v PropertyValue
		switch PropertyType(t) {
		case TypeUInt32:
			n, err := parseDecimal(val)
			if err != nil || n > 0xffffffff {
				return PropertySetRegistry{}, perr("invalid UINT32 value %s", quote(val))
			}
			v = UInt32Value(uint32(n))
		case TypeByteArray:
			raw, err := DecodeBase64(string(val))
			if err != nil {
				return PropertySetRegistry{}, &PropertySetError{Line: line, Offset: start, Reason: fmt.Sprintf("key %s: invalid BYTE_ARRAY value", quote(key)), Err: err}
			}
			if len(raw) < 8 {
				return PropertySetRegistry{}, perr("key %s: BYTE_ARRAY value has %d bytes, shorter than its 8-byte bit-length prefix", quote(key), len(raw))
			}
			bits := binary.LittleEndian.Uint64(raw)
			if need := payloadLen(bits); need != uint64(len(raw)-8) {
				return PropertySetRegistry{}, perr("key %s: BYTE_ARRAY bit length %d needs %d payload bytes, value has %d", quote(key), bits, need, len(raw)-8)
			}
			v = PropertyValue{Type: TypeByteArray, Bytes: raw[8:len(raw):len(raw)]}
			if bits != uint64(len(raw)-8)*8 {
				v.BitLen = bits
			}
		default:
			return PropertySetRegistry{}, perr("unsupported property type %d", t)
		}
		set := &r.Sets[cur]
		if i, ok := keyIndex[cur][string(key)]; ok {
			set.Properties[i].Value = v
		} else {
			keyIndex[cur][string(key)] = len(set.Properties)
			set.Properties = append(set.Properties, Property{Key: string(key), Value: v})
		}
	}
	return r, nil
}

// parseDecimal parses ASCII digits (no sign, leading zeros allowed) into a
// uint64, failing on overflow.
func parseDecimal(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, strconv.ErrSyntax
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, strconv.ErrRange
		}
		n = n*10 + d
	}
	return n, nil
}
