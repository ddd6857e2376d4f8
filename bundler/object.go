package bundler

import (
	"fmt"
	"io"
	"strings"

	"github.com/offcc/offcc/objfile"
)

// shtProgbits is the section type clang (through llvm-objcopy
// --add-section) gives bundle sections.
const shtProgbits = 1

// IsObject reports whether b is an object file that -type=o bundles into
// sections rather than a binary bundle. Only ELF64 little-endian relocatable
// objects are handled; clang also handles COFF and Mach-O hosts.
func IsObject(b []byte) bool {
	if !objfile.IsELF(b) || len(b) < 18 || b[4] != 2 || b[5] != 1 {
		return false
	}
	_, err := objfile.Sections(b)
	return err == nil && b[16] == 1 && b[17] == 0
}

// ObjectEntries returns the bundle entries of an object bundle: every
// section named "__CLANG_OFFLOAD_BUNDLE__<ID>", in section header order,
// with the section contents as payload. The host entry's payload is the
// single 0 byte clang stores; HostObject gives the host object itself.
func ObjectEntries(obj []byte) ([]Entry, error) {
	secs, err := objfile.Sections(obj)
	if err != nil {
		return nil, &FormatError{Structure: "object bundle", Offset: 0, Msg: err.Error()}
	}
	var out []Entry
	for _, s := range secs {
		id, ok := strings.CutPrefix(s.Name, Magic)
		if !ok {
			continue
		}
		out = append(out, Entry{ID: id, Offset: s.Offset, Size: uint64(len(s.Data)), Data: s.Data})
	}
	return out, nil
}

// isHostPlaceholder reports whether an object bundle section's contents
// mark the host entry (one 0 byte), as clang's reader checks.
func isHostPlaceholder(d []byte) bool { return len(d) == 1 && d[0] == 0 }

func isBundleSection(name string) bool { return strings.HasPrefix(name, Magic) }

// WriteHostObject writes the host object of an object bundle to w: the
// object without its bundle sections, as clang's `llvm-objcopy --regex
// --remove-section=__CLANG_OFFLOAD_BUNDLE__.*` (the layout differs from
// objcopy's; sections, symbols and relocations are the same).
func WriteHostObject(w io.Writer, obj []byte) error {
	return objfile.WriteWithoutSections(w, obj, isBundleSection)
}

// WriteObject writes an object bundle to w: host (an ELF relocatable
// object) with one section "__CLANG_OFFLOAD_BUNDLE__<ids[i]>" per entry, in
// order, flags SHF_EXCLUDE, type SHT_PROGBITS, alignment 1, as clang's
// llvm-objcopy --add-section/--set-section-flags=readonly,exclude does. The
// entry at hostIndex holds a single 0 byte instead of payloads[hostIndex].
func WriteObject(w io.Writer, host []byte, ids []string, payloads [][]byte, hostIndex int) error {
	if len(ids) != len(payloads) {
		return fmt.Errorf("object bundle: %d IDs but %d payloads", len(ids), len(payloads))
	}
	secs := make([]objfile.NewSection, len(ids))
	for i, id := range ids {
		d := payloads[i]
		if i == hostIndex {
			d = []byte{0}
		}
		secs[i] = objfile.NewSection{Name: Magic + id, Type: shtProgbits, Flags: objfile.SHFExclude, Align: 1, Data: d}
	}
	return objfile.WriteWithSections(w, host, secs)
}
