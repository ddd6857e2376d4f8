package actions

import (
	"slices"
	"testing"
)

func TestParseDepFile(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"simple", "m.o: m.c h.h\n", []string{"m.c", "h.h"}},
		{"continued", "m.o: m.c \\\n  /usr/include/stdio.h \\\n  h.h\n", []string{"m.c", "/usr/include/stdio.h", "h.h"}},
		{"escapes", `m.o: a\ b.h c\#d.h e$$f.h g\\\ h.h` + "\n", []string{"a b.h", "c#d.h", "e$f.h", `g\ h.h`}},
		{"phony targets (-MP)", "m.o: m.c h.h\n\nh.h:\n", []string{"m.c", "h.h"}},
		{"several targets", "m.o m.d: m.c\n", []string{"m.c"}},
		{"crlf and duplicates", "m.o: m.c h.h \\\r\n h.h\r\n", []string{"m.c", "h.h"}},
		{"comment", "# generated\nm.o: m.c\n", []string{"m.c"}},
		{"empty", "", nil},
	} {
		if got := ParseDepFile(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func FuzzParseDepFile(f *testing.F) {
	f.Add("m.o: m.c \\\n  h.h\n\nh.h:\n")
	f.Add(`a\ b: c\#d $$e` + "\n")
	f.Fuzz(func(t *testing.T, text string) {
		deps := ParseDepFile(text)
		seen := map[string]bool{}
		for _, d := range deps {
			if d == "" || seen[d] {
				t.Fatalf("empty or repeated dependency %q in %q", d, deps)
			}
			seen[d] = true
		}
	})
}
