package cache

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/offcc/offcc/actions"
)

// maxExplainLines bounds the changed key lines shown for one miss.
const maxExplainLines = 8

// explainMiss says why a missed: what changed in its key since the entry
// last stored for the same action of the same build (the flag, the input,
// the tool), or, when the known inputs are unchanged, which header differs.
func (s *Session) explainMiss(a *actions.Action, ak *actionKey) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: miss\n", a.Label())
	e, err := s.store.Get(s.slotKey(a))
	var last lastRecord
	if err != nil || e.Kind != KindLast || json.Unmarshal(e.Record, &last) != nil {
		b.WriteString("  never stored before\n")
		s.explainf("%s", b.String())
		return
	}
	if last.Manifest == ak.sum.String() && a.DepFile != "" {
		// Same known inputs: the header set is what changed.
		b.WriteString(s.headerChange(ak))
	} else {
		b.WriteString(diffKeyText(last.Text, ak.text))
	}
	s.explainf("%s", b.String())
}

// diffKeyText lists the lines of two key texts that differ.
func diffKeyText(old, cur string) string {
	oldLines := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	curLines := strings.Split(strings.TrimSuffix(cur, "\n"), "\n")
	inOld, inCur := map[string]int{}, map[string]int{}
	for _, l := range oldLines {
		inOld[l]++
	}
	for _, l := range curLines {
		inCur[l]++
	}
	var b strings.Builder
	n := 0
	for _, l := range oldLines {
		if inCur[l] > 0 {
			inCur[l]--
			continue
		}
		if n++; n <= maxExplainLines {
			fmt.Fprintf(&b, "  was: %s\n", l)
		}
	}
	for _, l := range curLines {
		if inOld[l] > 0 {
			inOld[l]--
			continue
		}
		if n++; n <= maxExplainLines {
			fmt.Fprintf(&b, "  now: %s\n", l)
		}
	}
	if n > maxExplainLines {
		fmt.Fprintf(&b, "  ... %d more changed lines\n", n-maxExplainLines)
	}
	if n == 0 {
		b.WriteString("  key unchanged: the entry was removed (trimmed, cleared or damaged)\n")
	}
	return b.String()
}

// headerChange names, for the newest candidate of ak's manifest, the first
// header that differs now or the shadowing file that appeared.
func (s *Session) headerChange(ak *actionKey) string {
	e, err := s.store.Get(ak.sum)
	if err != nil || e.Kind != KindManifest {
		return "  same flags, tool and inputs; no header list stored\n"
	}
	m, err := decodeManifest(e.Record)
	if err != nil || len(m.Candidates) == 0 {
		return "  same flags, tool and inputs; no header list stored\n"
	}
	if why := s.candidateMismatch(&m.Candidates[0], ak); why != "" {
		return "  " + why + "\n"
	}
	return "  same flags, tool, inputs and headers: the entry was removed (trimmed, cleared or damaged)\n"
}
