package bundler

import (
	"fmt"
	"strings"

	"github.com/offcc/offcc/target"
)

// ID is a bundle entry ID, <kind>-<triple>-<target ID>, in the form clang 22
// stores and lists it.
type ID struct {
	Kind string // offload kind: host, openmp, hip or hipv4
	// Triple is the normalised triple as it appears in the stored ID: four
	// components ("nvptx64-nvidia-cuda-unknown"), or for OS amdhsa three
	// components and a trailing '-' ("amdgcn-amd-amdhsa-"), as clang does.
	Triple   string
	TargetID string // processor and features ("gfx90a:xnack+"), or ""
}

// String returns the stored form of the ID: Kind + "-" + Triple + "-" +
// TargetID.
func (id ID) String() string { return id.Kind + "-" + id.Triple + "-" + id.TargetID }

// errTargetFormat is clang 22's message for a target without 5 or 6 fields.
const errTargetFormat = "Targets need to follow the format '<offload kind>-<target triple>', where '<target triple>' follows the format '<kind>-<arch>-<vendor>-<os>-<env>[-<target id>[:target features]]'."

// splitID splits s on '-' at most 5 times, as clang's OffloadTargetInfo
// does; ok reports 5 or 6 parts.
func splitID(s string) (parts []string, ok bool) {
	parts = strings.SplitN(s, "-", 6)
	return parts, len(parts) == 5 || len(parts) == 6
}

// parseIDLoose is clang's OffloadTargetInfo constructor: it never fails on
// a string with 5 or 6 fields, drops a sixth field whose processor is not a
// known OffloadArch and normalises the triple. raw is the triple as given.
func parseIDLoose(s string) (id ID, raw string, ok bool) {
	parts, ok := splitID(s)
	if !ok {
		return ID{}, "", false
	}
	if len(parts) == 6 {
		proc, _, _ := strings.Cut(parts[5], ":")
		if proc != "" && target.IsOffloadArch(proc) {
			id.TargetID = parts[5]
		}
	}
	id.Kind = parts[0]
	raw = strings.Join(parts[1:5], "-")
	if target.ParseOS(parts[3]) == "amdhsa" {
		id.Triple = target.NormalizeForm(raw, 3) + "-"
	} else {
		id.Triple = target.NormalizeForm(raw, 4)
	}
	return id, raw, true
}

// validKind reports whether clang 22 accepts offload kind k.
func validKind(k string) bool { return k == "host" || k == "openmp" || k == "hip" || k == "hipv4" }

// ParseID parses a bundle entry ID or -targets element exactly as clang 22's
// clang-offload-bundler does: split on '-' at most 5 times into 5 or 6
// parts, kind one of host, openmp, hip, hipv4 (cuda, sycl and others are
// rejected), an architecture LLVM knows, and a sixth part kept only when
// its processor is a known OffloadArch (otherwise silently dropped). The
// triple is normalised as llvm::Triple::normalize does (empty fields become
// "unknown"; for OS amdhsa three fields and an empty environment).
// Errors carry clang's message text.
func ParseID(s string) (ID, error) {
	id, raw, ok := parseIDLoose(s)
	if !ok {
		return ID{}, fmt.Errorf("%s", errTargetFormat)
	}
	kindOK := validKind(id.Kind)
	tripleOK := raw != "" && target.KnownArch(target.ArchName(raw))
	if !kindOK || !tripleOK {
		msg := fmt.Sprintf("invalid target '%s'", s)
		if !kindOK {
			msg += fmt.Sprintf(", unknown offloading kind '%s'", id.Kind)
		}
		if !tripleOK {
			msg += fmt.Sprintf(", unknown target triple '%s'", raw)
		}
		return ID{}, fmt.Errorf("%s", msg)
	}
	return id, nil
}

// IsHost reports whether the ID's kind is host.
func (id ID) IsHost() bool { return id.Kind == "host" }

// kindCompatible is OffloadTargetInfo::isOffloadKindCompatible: a code
// object of kind k serves a target of kind t.
func kindCompatible(k, t string, hipOpenMP bool) bool {
	if k == t || (k == "hip" && t == "hipv4") || (k == "hipv4" && t == "hip") {
		return true
	}
	if hipOpenMP {
		return (strings.HasPrefix(strings.ToLower(k), "hip") && t == "openmp") ||
			(k == "openmp" && strings.HasPrefix(strings.ToLower(t), "hip"))
	}
	return false
}

// Compatible reports whether a code object with bundle ID code may be
// extracted for the requested target tgt, by clang's
// isCodeObjectCompatible: same ID; or compatible kinds (hip and hipv4
// always, with openmp when hipOpenMP), equal triples (compared as
// llvm::Triple values, target.Equal), the same processor, no more features
// than tgt and each of them with the same sign in tgt.
func Compatible(code, tgt ID, hipOpenMP bool) bool {
	sameTriple := target.Equal(code.Triple, tgt.Triple)
	if code.Kind == tgt.Kind && sameTriple && code.TargetID == tgt.TargetID {
		return true
	}
	if !kindCompatible(code.Kind, tgt.Kind, hipOpenMP) || !sameTriple {
		return false
	}
	c, err1 := target.ParseID(code.TargetID)
	t, err2 := target.ParseID(tgt.TargetID)
	if err1 != nil || err2 != nil || c.Processor != t.Processor {
		return false
	}
	if len(c.Features) > len(t.Features) {
		return false
	}
	for _, f := range c.Features {
		if on, ok := t.Lookup(f.Name); !ok || on != f.On {
			return false
		}
	}
	return true
}

// ParseID19 parses a -targets element as LLVM 19's clang-offload-bundler
// does (OffloadTargetInfo of 19.1): the part before the first ':' split at
// its last '-'; when what follows is a known OffloadArch it starts the
// target ID (features included), else there is none. The kind is what
// precedes the first '-' and the triple the rest, its four components
// (arch, vendor, OS, environment: empty where missing, the environment
// everything after the third '-') joined by '-' without normalising them:
// "host-x86_64-unknown-linux" has triple "x86_64-unknown-linux-" and is
// stored as "host-x86_64-unknown-linux--". The kind must be one of host,
// openmp, hip or hipv4 and the architecture one LLVM knows; errors carry
// clang 19's message text.
func ParseID19(s string) (ID, error) {
	features, _, _ := strings.Cut(s, ":")
	var id ID
	kindTriple := features
	if i := strings.LastIndexByte(features, '-'); i >= 0 && target.IsOffloadArch(features[i+1:]) {
		kindTriple = features[:i]
		id.TargetID = s[strings.Index(s, features[i+1:]):]
	}
	kind, triple, _ := strings.Cut(kindTriple, "-")
	id.Kind = kind
	var c [4]string
	rest := triple
	for i := range 3 {
		c[i], rest, _ = strings.Cut(rest, "-")
	}
	c[3] = rest
	id.Triple = strings.Join(c[:], "-")
	kindOK, tripleOK := validKind(id.Kind), target.KnownArch(c[0])
	if !kindOK || !tripleOK {
		msg := fmt.Sprintf("invalid target '%s'", s)
		if !kindOK {
			msg += fmt.Sprintf(", unknown offloading kind '%s'", id.Kind)
		}
		if !tripleOK {
			msg += fmt.Sprintf(", unknown target triple '%s'", id.Triple)
		}
		return ID{}, fmt.Errorf("%s", msg)
	}
	return id, nil
}
