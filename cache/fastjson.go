package cache

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A lookup that hits reads an index per action and a manifest per
// compile that has a dependency file: tens of kilobytes of JSON (a
// manifest lists the hundreds of paths that would shadow its headers),
// which encoding/json decodes slowly enough to be a good part of a warm
// rebuild. fastIndex and fastManifest decode what EncodeIndex and the
// manifest's json.Marshal write: each field in its place, no whitespace,
// the strings json.Marshal writes. Anything else, valid JSON or not, they
// refuse (ok false) and the caller decodes with encoding/json: they
// accept nothing that encoding/json would decode differently (the tests
// check this on what they accept). fastResult and fastStats do the same
// for the result record a hit reads and the statistics every build
// updates, and appendStats writes those as json.Marshal would: a warm
// rebuild then spends nothing on encoding/json's first use of each type,
// which costs more than the decoding itself.

// jscan reads JSON from b at i; a fault sets bad, after which every
// method returns zero values.
type jscan struct {
	b   []byte
	i   int
	bad bool
}

// lit consumes s, or fails.
func (s *jscan) lit(lit string) {
	if s.bad || len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		s.bad = true
		return
	}
	s.i += len(lit)
}

// try consumes s if it is next and reports whether it was.
func (s *jscan) try(lit string) bool {
	if s.bad || len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// str reads a string: UTF-8 bytes from 0x20 on but '"' and '\\', and the
// escapes \" \\ \/ \b \f \n \r \t and \uXXXX (a surrogate pair for one
// character beyond the BMP). A lone surrogate, invalid UTF-8 and control
// bytes are refused (encoding/json replaces some with U+FFFD).
func (s *jscan) str() string {
	b, _ := s.strRaw()
	return string(b)
}

// strBytes is str as a slice of its own.
func (s *jscan) strBytes() []byte {
	b, fresh := s.strRaw()
	if !fresh && b != nil {
		b = append(make([]byte, 0, len(b)), b...)
	}
	return b
}

// strRaw reads a string (see str): a slice of s.b when it has no escape
// (fresh false), else a slice of its own.
func (s *jscan) strRaw() (b []byte, fresh bool) {
	s.lit(`"`)
	if s.bad {
		return nil, false
	}
	start := s.i
	// The common case: no escape.
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			return s.b[start : s.i-1], false
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c < utf8.RuneSelf {
			s.i++
			continue
		}
		r, n := utf8.DecodeRune(s.b[s.i:])
		if r == utf8.RuneError && n <= 1 {
			s.bad = true
			return nil, false
		}
		s.i += n
	}
	// The string's escaped length bounds its length.
	end := s.i
	for end < len(s.b) && s.b[end] != '"' {
		if s.b[end] == '\\' {
			end++
		}
		end++
	}
	out := append(make([]byte, 0, min(end, len(s.b))-start), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return out, true
		case c < 0x20:
			s.bad = true
			return nil, false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				s.bad = true
				return nil, false
			}
			e := s.b[s.i+1]
			s.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := s.hex4()
				if utf16.IsSurrogate(r) {
					if !s.try(`\u`) {
						s.bad = true
						return nil, false
					}
					r = utf16.DecodeRune(r, s.hex4())
					if r == utf8.RuneError {
						s.bad = true
						return nil, false
					}
				}
				if s.bad {
					return nil, false
				}
				out = utf8.AppendRune(out, r)
			default:
				s.bad = true
				return nil, false
			}
		case c < utf8.RuneSelf:
			// A run of plain ASCII at once.
			j := s.i + 1
			for j < len(s.b) && s.b[j] >= 0x20 && s.b[j] < utf8.RuneSelf && s.b[j] != '"' && s.b[j] != '\\' {
				j++
			}
			out = append(out, s.b[s.i:j]...)
			s.i = j
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 {
				s.bad = true
				return nil, false
			}
			out = append(out, s.b[s.i:s.i+n]...)
			s.i += n
		}
	}
	s.bad = true
	return nil, false
}

// hex4 reads the four hex digits of a \u escape.
func (s *jscan) hex4() rune {
	if s.bad || len(s.b)-s.i < 4 {
		s.bad = true
		return 0
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			s.bad = true
			return 0
		}
	}
	s.i += 4
	return r
}

// number returns the bytes of an integer: an optional '-' (when signed),
// then 0 or digits not starting with 0.
func (s *jscan) number(signed bool) string {
	if s.bad {
		return ""
	}
	start := s.i
	if signed && s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	d := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == d || s.b[d] == '0' && s.i-d > 1 {
		s.bad = true
		return ""
	}
	// A fraction or exponent is for encoding/json to refuse.
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.bad = true
		return ""
	}
	return string(s.b[start:s.i])
}

func (s *jscan) int64() int64 {
	v, err := strconv.ParseInt(s.number(true), 10, 64)
	if err != nil {
		s.bad = true
	}
	return v
}

func (s *jscan) uint(bits int) uint64 {
	v, err := strconv.ParseUint(s.number(false), 10, bits)
	if err != nil {
		s.bad = true
	}
	return v
}

// end checks that all of b was read.
func (s *jscan) end() bool { return !s.bad && s.i == len(s.b) }

// fastIndex decodes the body of an index file as EncodeIndex writes it
// for an unsigned entry whose record is UTF-8 (see above).
func fastIndex(body []byte) (*indexJSON, bool) {
	s := &jscan{b: body}
	var ij indexJSON
	s.lit(`{"kind":`)
	ij.Kind = Kind(s.str())
	s.lit(`,"record":`)
	ij.recordRaw = s.strBytes()
	if ij.recordRaw == nil {
		ij.recordRaw = []byte{}
	}
	if s.try(`,"blobs":[`) {
		for {
			var b blobJSON
			s.lit(`{"name":`)
			b.Name = s.str()
			s.lit(`,"size":`)
			b.Size = s.int64()
			s.lit(`,"sha256":`)
			b.Sum = s.str()
			if s.try(`,"mode":`) {
				b.Mode = uint32(s.uint(32))
			}
			s.lit(`}`)
			if s.bad {
				return nil, false
			}
			ij.Blobs = append(ij.Blobs, b)
			if !s.try(`,`) {
				break
			}
		}
		s.lit(`]`)
	}
	s.lit(`}`)
	return &ij, s.end()
}

// fastManifest decodes a manifest as json.Marshal writes it (see above).
func fastManifest(data []byte) (*manifest, bool) {
	s := &jscan{b: data}
	var m manifest
	s.lit(`{"candidates":`)
	if !s.try(`null`) {
		s.lit(`[`)
		m.Candidates = []candidate{}
		for !s.bad && !s.try(`]`) {
			if len(m.Candidates) > 0 {
				s.lit(`,`)
			}
			m.Candidates = append(m.Candidates, s.candidate())
		}
	}
	s.lit(`}`)
	return &m, s.end()
}

func (s *jscan) candidate() candidate {
	var c candidate
	s.lit(`{"headers":`)
	if !s.try(`null`) {
		s.lit(`[`)
		c.Headers = []header{}
		for !s.bad && !s.try(`]`) {
			if len(c.Headers) > 0 {
				s.lit(`,`)
			}
			var h header
			s.lit(`{"path":`)
			h.Path = s.str()
			s.lit(`,"sha256":`)
			h.Sum = s.str()
			s.lit(`,"stat":{"size":`)
			h.Stat.Size = s.int64()
			s.lit(`,"mtime":`)
			h.Stat.Mtime = s.int64()
			s.lit(`,"ctime":`)
			h.Stat.Ctime = s.int64()
			s.lit(`,"dev":`)
			h.Stat.Dev = s.uint(64)
			s.lit(`,"ino":`)
			h.Stat.Ino = s.uint(64)
			s.lit(`}`)
			h.Trust = s.try(`,"trust":true`)
			s.lit(`}`)
			c.Headers = append(c.Headers, h)
		}
	}
	if s.try(`,"absent":[`) {
		for {
			c.Absent = append(c.Absent, s.str())
			if s.bad || !s.try(`,`) {
				break
			}
		}
		s.lit(`]`)
	}
	s.lit(`,"result":`)
	c.Result = s.str()
	c.Inodes = s.try(`,"inodes":true`)
	s.lit(`}`)
	return c
}

// fastResult decodes a result record as json.Marshal writes it (see
// above).
func fastResult(data []byte) (*resultRecord, bool) {
	s := &jscan{b: data}
	var r resultRecord
	s.lit(`{"kind":`)
	r.Kind = s.str()
	if s.try(`,"stdout":`) {
		r.Stdout = s.str()
	}
	if s.try(`,"stderr":`) {
		r.Stderr = s.str()
	}
	s.lit(`,"ms":`)
	r.Millis = s.int64()
	s.lit(`}`)
	return &r, s.end()
}

// fastStats decodes a statistics shard as appendStats (or json.Marshal)
// writes it, with the blanks addStats pads it with (see above).
func fastStats(data []byte) (*Stats, bool) {
	s := &jscan{b: bytes.TrimRight(data, " \t\r\n")}
	var st Stats
	s.lit(`{"kinds":`)
	if !s.try(`null`) {
		s.lit(`{`)
		st.Kinds = map[string]*KindStats{}
		for !s.bad && !s.try(`}`) {
			if len(st.Kinds) > 0 {
				s.lit(`,`)
			}
			name := s.str()
			s.lit(`:`)
			k := &KindStats{}
			s.lit(`{"hits":`)
			k.Hits = s.int64()
			s.lit(`,"misses":`)
			k.Misses = s.int64()
			if s.try(`,"uncacheable":`) {
				k.Uncacheable = s.counts()
			}
			if s.try(`,"not_stored":`) {
				k.NotStored = s.counts()
			}
			s.lit(`,"saved_ms":`)
			k.SavedMillis = s.int64()
			s.lit(`,"stored_bytes":`)
			k.StoredBytes = s.int64()
			s.lit(`,"restored_bytes":`)
			k.RestoredBytes = s.int64()
			s.lit(`}`)
			if _, dup := st.Kinds[name]; dup {
				s.bad = true
			}
			st.Kinds[name] = k
		}
	}
	r := &st.Remote
	s.lit(`,"remote":{"hits":`)
	r.Hits = s.int64()
	s.lit(`,"misses":`)
	r.Misses = s.int64()
	s.lit(`,"errors":`)
	r.Errors = s.int64()
	s.lit(`,"stores":`)
	r.Stores = s.int64()
	s.lit(`,"untrusted":`)
	r.Untrusted = s.int64()
	s.lit(`,"bytes_up":`)
	r.BytesUp = s.int64()
	s.lit(`,"bytes_down":`)
	r.BytesDown = s.int64()
	s.lit(`}}`)
	return &st, s.end()
}

// counts reads a non-empty object of counts by reason.
func (s *jscan) counts() map[string]int64 {
	m := map[string]int64{}
	s.lit(`{`)
	for !s.bad {
		name := s.str()
		s.lit(`:`)
		if _, dup := m[name]; dup {
			s.bad = true
		}
		m[name] = s.int64()
		if !s.try(`,`) {
			break
		}
	}
	s.lit(`}`)
	return m
}

// appendStats appends st as json.Marshal writes it, when every name in it
// is printable ASCII that JSON writes as it is (ok false otherwise: the
// caller marshals st with encoding/json).
func appendStats(b []byte, st *Stats) ([]byte, bool) {
	plain := func(v string) bool {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	num := func(b []byte, name string, v int64) []byte {
		b = append(b, `"`...)
		b = append(b, name...)
		b = append(b, `":`...)
		return strconv.AppendInt(b, v, 10)
	}
	counts := func(b []byte, name string, m map[string]int64) ([]byte, bool) {
		if len(m) == 0 {
			return b, true
		}
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `":{`...)
		for i, r := range slices.Sorted(maps.Keys(m)) {
			if !plain(r) {
				return b, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = num(b, r, m[r])
		}
		return append(b, '}'), true
	}
	b = append(b, `{"kinds":`...)
	if st.Kinds == nil {
		b = append(b, `null`...)
	} else {
		b = append(b, '{')
		for i, name := range slices.Sorted(maps.Keys(st.Kinds)) {
			k := st.Kinds[name]
			if k == nil || !plain(name) {
				return b, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `"`...)
			b = append(b, name...)
			b = append(b, `":{`...)
			b = num(b, "hits", k.Hits)
			b = append(b, ',')
			b = num(b, "misses", k.Misses)
			var ok bool
			if b, ok = counts(b, "uncacheable", k.Uncacheable); !ok {
				return b, false
			}
			if b, ok = counts(b, "not_stored", k.NotStored); !ok {
				return b, false
			}
			b = append(b, ',')
			b = num(b, "saved_ms", k.SavedMillis)
			b = append(b, ',')
			b = num(b, "stored_bytes", k.StoredBytes)
			b = append(b, ',')
			b = num(b, "restored_bytes", k.RestoredBytes)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	r := &st.Remote
	b = append(b, `,"remote":{`...)
	b = num(b, "hits", r.Hits)
	b = append(b, ',')
	b = num(b, "misses", r.Misses)
	b = append(b, ',')
	b = num(b, "errors", r.Errors)
	b = append(b, ',')
	b = num(b, "stores", r.Stores)
	b = append(b, ',')
	b = num(b, "untrusted", r.Untrusted)
	b = append(b, ',')
	b = num(b, "bytes_up", r.BytesUp)
	b = append(b, ',')
	b = num(b, "bytes_down", r.BytesDown)
	return append(b, `}}`...), true
}
