package target

import (
	"reflect"
	"testing"
)

func TestParseID(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ID
		ok   bool
	}{
		{"gfx90a", ID{Processor: "gfx90a"}, true},
		{"gfx90a:xnack+", ID{"gfx90a", []Feature{{"xnack", true}}}, true},
		{"gfx908:sramecc+:xnack-", ID{"gfx908", []Feature{{"sramecc", true}, {"xnack", false}}}, true},
		{"gfx908:xnack-:sramecc+", ID{"gfx908", []Feature{{"xnack", false}, {"sramecc", true}}}, true},
		{"sm_80", ID{Processor: "sm_80"}, true},
		{"anything-at-all:f+", ID{"anything-at-all", []Feature{{"f", true}}}, true}, // the processor is not checked
		{"", ID{}, true},
		{":xnack+", ID{"", []Feature{{"xnack", true}}}, true},
		{"gfx90a:xnack", ID{}, false},
		{"gfx90a:xnack+:xnack-", ID{}, false},
		{"gfx90a:xnack+:xnack+", ID{}, false},
		{"gfx90a:", ID{}, false},
		{"gfx90a:+", ID{}, false},
		{"gfx90a::xnack+", ID{}, false},
	} {
		got, err := ParseID(c.in)
		if (err == nil) != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseID(%q) = %+v, %v; want %+v, ok %v", c.in, got, err, c.want, c.ok)
			continue
		}
		if c.ok && got.String() != c.in {
			t.Errorf("ParseID(%q).String() = %q", c.in, got.String())
		}
	}
	id, _ := ParseID("gfx908:sramecc+:xnack-")
	for _, c := range []struct {
		name   string
		on, ok bool
	}{{"sramecc", true, true}, {"xnack", false, true}, {"cumode", false, false}} {
		if on, ok := id.Lookup(c.name); on != c.on || ok != c.ok {
			t.Errorf("Lookup(%q) = %v, %v", c.name, on, ok)
		}
	}
}

func TestConflictingIDs(t *testing.T) {
	for _, c := range []struct {
		ids  []string
		a, b string
	}{
		{[]string{"gfx90a", "gfx90a:xnack+"}, "gfx90a", "gfx90a:xnack+"},
		{[]string{"gfx90a:xnack+", "gfx90a"}, "gfx90a", "gfx90a:xnack+"},
		{[]string{"gfx90a:xnack+", "gfx90a:xnack-"}, "", ""},
		{[]string{"gfx90a:xnack+", "gfx90a:sramecc+"}, "gfx90a:sramecc+", "gfx90a:xnack+"},
		{[]string{"gfx90a:xnack+", "gfx908"}, "", ""},
		{[]string{"gfx90a", "gfx90a"}, "", ""},
		{[]string{"gfx90a:xnack+", "gfx90a:xnack+:sramecc-"}, "gfx90a:xnack+", "gfx90a:xnack+:sramecc-"},
		{[]string{"gfx90a:xnack", "gfx90a:xnack+"}, "", ""}, // the first does not parse
		{[]string{"hip-amdgcn-amd-amdhsa--gfx90a", "hip-amdgcn-amd-amdhsa--gfx90a:xnack-"}, "hip-amdgcn-amd-amdhsa--gfx90a", "hip-amdgcn-amd-amdhsa--gfx90a:xnack-"},
		{nil, "", ""},
	} {
		in := append([]string(nil), c.ids...)
		a, b, ok := ConflictingIDs(c.ids)
		if a != c.a || b != c.b || ok != (c.a != "") {
			t.Errorf("ConflictingIDs(%q) = %q %q %v", c.ids, a, b, ok)
		}
		if !reflect.DeepEqual(in, c.ids) {
			t.Errorf("ConflictingIDs modified its argument: %q", c.ids)
		}
	}
}
