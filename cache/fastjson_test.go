package cache

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// checkFastIndex fails if fastIndex accepts body and encoding/json
// decodes it otherwise (or not at all).
func checkFastIndex(t *testing.T, body []byte) bool {
	t.Helper()
	got, ok := fastIndex(body)
	if !ok {
		return false
	}
	var want indexJSON
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatalf("fastIndex accepts %q, which encoding/json refuses: %v", body, err)
	}
	if got.Record != "" || got.recordRaw == nil {
		t.Fatalf("fastIndex(%q): record %q as a string, raw %v", body, got.Record, got.recordRaw)
	}
	got.Record, got.recordRaw = string(got.recordRaw), nil
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("fastIndex(%q) = %+v, encoding/json gives %+v", body, *got, want)
	}
	return true
}

func checkFastManifest(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := fastManifest(data)
	if !ok {
		return false
	}
	var want manifest
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fastManifest accepts %q, which encoding/json refuses: %v", data, err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("fastManifest(%q) = %+v, encoding/json gives %+v", data, *got, want)
	}
	return true
}

// testStrings are strings json.Marshal escapes in every way.
var testStrings = []string{"", "/usr/include/stdio.h", "a\"b\\c", "tab\there\nnl\r\x01\x1f", "<&>", "\u2028\u2029",
	"é ü 漢字 😀", "\xff\xfe bad utf-8", "\ufffd", "a/b", "{\"kind\":\"x\"}"}

func TestFastJSONCanonical(t *testing.T) {
	for _, str := range testStrings {
		for _, rec := range []string{str, `{"candidates":[]}`} {
			e := &Entry{Kind: KindResult, Record: []byte(rec)}
			e.Blobs = []Blob{{Name: "out0", Size: 12, Mode: 0o755}, {Name: "out1", Size: 0}}
			data := EncodeIndex(e)
			body := data[strings.IndexByte(string(data), '\n')+1:]
			accepted := checkFastIndex(t, body)
			if rec == str && !strings.ContainsAny(str, "\xff") && !accepted {
				t.Errorf("fastIndex refuses EncodeIndex's %q", body)
			}
			e.Blobs = nil
			data = EncodeIndex(e)
			checkFastIndex(t, data[strings.IndexByte(string(data), '\n')+1:])
		}
		m := manifest{Candidates: []candidate{
			{Headers: []header{{Path: str, Sum: "ab", Stat: FileStat{Size: 1, Mtime: -5, Ctime: 1 << 62, Dev: 1<<64 - 1, Ino: 7}, Trust: true}, {Path: "x"}}, Absent: []string{str, "y"}, Result: "r", Inodes: true},
			{Result: "s"},
			{Headers: []header{}, Absent: []string{}},
		}}
		data, _ := json.Marshal(m)
		if !checkFastManifest(t, data) && !strings.ContainsAny(str, "\xff") {
			t.Errorf("fastManifest refuses json.Marshal's %s", data)
		}
		for _, mm := range []manifest{{}, {Candidates: []candidate{}}} {
			data, _ := json.Marshal(mm)
			if !checkFastManifest(t, data) {
				t.Errorf("fastManifest refuses json.Marshal's %s", data)
			}
		}
	}
}

// TestFastJSONMutated checks, on mutations of canonical encodings, that
// what the fast decoders accept encoding/json decodes alike.
func TestFastJSONMutated(t *testing.T) {
	var seeds [][]byte
	for _, str := range testStrings {
		e := &Entry{Kind: KindManifest, Record: []byte(str), Blobs: []Blob{{Name: "out0", Size: 3, Mode: 0o644}}}
		data := EncodeIndex(e)
		seeds = append(seeds, data[strings.IndexByte(string(data), '\n')+1:])
		m := manifest{Candidates: []candidate{{Headers: []header{{Path: str, Sum: "ab", Stat: FileStat{Size: 1, Mtime: 2, Ctime: 3, Dev: 4, Ino: 5}, Trust: true}}, Absent: []string{str}, Result: "r"}}}
		d, _ := json.Marshal(m)
		seeds = append(seeds, d)
	}
	pieces := []string{`"`, `\`, `\u`, `\ud800`, `\udc00`, `d83d\ude00`, `0`, `-`, `1e3`, `.5`, `00`, `null`, `true`, `,`, `]`, `}`, ` `, "\x00", "\xff", `"trust":false`, `"absent":[]`, `"x":1,`, `18446744073709551616`, `9223372036854775808`}
	r := rand.New(rand.NewSource(1))
	accepted := 0
	for i := 0; i < 200000; i++ {
		b := []byte(string(seeds[r.Intn(len(seeds))]))
		for n := r.Intn(3) + 1; n > 0; n-- {
			at := r.Intn(len(b) + 1)
			switch r.Intn(3) {
			case 0: // insert
				b = append(b[:at], append([]byte(pieces[r.Intn(len(pieces))]), b[at:]...)...)
			case 1: // delete
				if at < len(b) {
					b = append(b[:at], b[min(len(b), at+r.Intn(4)+1):]...)
				}
			case 2: // replace a byte
				if at < len(b) {
					b[at] = byte(r.Intn(256))
				}
			}
		}
		if checkFastIndex(t, b) {
			accepted++
		}
		if checkFastManifest(t, b) {
			accepted++
		}
	}
	t.Logf("%d mutations accepted", accepted)
}

func FuzzFastJSON(f *testing.F) {
	f.Add([]byte(`{"kind":"result","record":"{}","blobs":[{"name":"out0","size":1,"sha256":"x","mode":420}]}`))
	f.Add([]byte(`{"candidates":[{"headers":[{"path":"a","sha256":"b","stat":{"size":1,"mtime":2,"ctime":3,"dev":4,"ino":5},"trust":true}],"absent":["c"],"result":"d","inodes":true}]}`))
	f.Add([]byte(`{"kinds":{"compile":{"hits":1,"misses":2,"uncacheable":{"x":1},"saved_ms":3,"stored_bytes":4,"restored_bytes":5}},"remote":{"hits":0,"misses":0,"errors":0,"stores":0,"untrusted":0,"bytes_up":0,"bytes_down":0}}  `))
	f.Add([]byte(`{"kind":"compile","stderr":"warning\n","ms":12}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastIndex(t, b)
		checkFastManifest(t, b)
		checkFastStats(t, b)
		checkFastResult(t, b)
	})
}

func checkFastResult(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := fastResult(data)
	if !ok {
		return false
	}
	var want resultRecord
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fastResult accepts %q, which encoding/json refuses: %v", data, err)
	}
	if *got != want {
		t.Fatalf("fastResult(%q) = %+v, encoding/json gives %+v", data, *got, want)
	}
	return true
}

func checkFastStats(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := fastStats(data)
	if !ok {
		return false
	}
	var want Stats
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fastStats accepts %q, which encoding/json refuses: %v", data, err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("fastStats(%q) = %+v, encoding/json gives %+v", data, *got, want)
	}
	return true
}

// testStats are statistics with every field, maps empty and not, names
// that JSON escapes.
func testStats() []Stats {
	var out []Stats
	out = append(out, Stats{}, Stats{Kinds: map[string]*KindStats{}})
	for _, name := range testStrings {
		st := Stats{Kinds: map[string]*KindStats{
			"compile": {Hits: 3, Misses: -1, SavedMillis: 1 << 40, StoredBytes: 9, RestoredBytes: 10,
				Uncacheable: map[string]int64{name: 2, "run by clang's driver": 1}, NotStored: map[string]int64{}},
			name:  {NotStored: map[string]int64{"input modified during the compile": 4}},
			"zzz": {},
		}, Remote: RemoteStats{Hits: 1, Misses: 2, Errors: 3, Stores: 4, Untrusted: 5, BytesUp: 6, BytesDown: 7}}
		out = append(out, st)
	}
	return out
}

func TestFastStatsAndResult(t *testing.T) {
	for _, st := range testStats() {
		want, _ := json.Marshal(st)
		got, ok := appendStats(nil, &st)
		if ok && !bytes.Equal(got, want) {
			t.Errorf("appendStats = %s, json.Marshal %s", got, want)
		}
		plain := true
		for name := range st.Kinds {
			plain = plain && !strings.ContainsAny(name, "\"\\<>&\t\n\r\x01\x1f\xff\xfe") && !strings.ContainsFunc(name, func(r rune) bool { return r > 0x7e })
		}
		if !ok && plain && !strings.Contains(string(want), `\`) {
			t.Errorf("appendStats refuses %s", want)
		}
		if !checkFastStats(t, want) {
			t.Errorf("fastStats refuses json.Marshal's %s", want)
		}
		if !checkFastStats(t, append(want, "    \n"...)) {
			t.Errorf("fastStats refuses %s padded", want)
		}
	}
	for _, str := range testStrings {
		for _, r := range []resultRecord{{Kind: "compile", Millis: 5}, {Kind: str, Stdout: str, Stderr: str, Millis: -3}, {Stderr: "warning: x\n"}} {
			data, _ := json.Marshal(r)
			if !checkFastResult(t, data) && !strings.ContainsAny(str, "\xff") {
				t.Errorf("fastResult refuses json.Marshal's %s", data)
			}
		}
	}
}

// TestFastStatsMutated is TestFastJSONMutated for statistics and result
// records.
func TestFastStatsMutated(t *testing.T) {
	var seeds [][]byte
	for _, st := range testStats() {
		d, _ := json.Marshal(st)
		seeds = append(seeds, d)
	}
	for _, str := range testStrings {
		d, _ := json.Marshal(resultRecord{Kind: "compile", Stdout: str, Stderr: str, Millis: 7})
		seeds = append(seeds, d)
	}
	pieces := []string{`"`, `\`, `\u`, `0`, `-`, `1e3`, `00`, `null`, `{}`, `,`, `}`, ` `, "\x00", `"hits":1,`, `"x":{}`, `9223372036854775808`}
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 100000; i++ {
		b := []byte(string(seeds[r.Intn(len(seeds))]))
		for n := r.Intn(3) + 1; n > 0; n-- {
			at := r.Intn(len(b) + 1)
			switch r.Intn(3) {
			case 0:
				b = append(b[:at], append([]byte(pieces[r.Intn(len(pieces))]), b[at:]...)...)
			case 1:
				if at < len(b) {
					b = append(b[:at], b[min(len(b), at+r.Intn(4)+1):]...)
				}
			case 2:
				if at < len(b) {
					b[at] = byte(r.Intn(256))
				}
			}
		}
		checkFastStats(t, b)
		checkFastResult(t, b)
	}
}
