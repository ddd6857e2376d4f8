package bundler

import (
	"fmt"
	"path"
	"strings"

	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/target"
)

// ArchiveOptions configures UnbundleArchive.
type ArchiveOptions struct {
	// Targets are the requested targets (stored form, as ParseID(...).String()).
	Targets []string
	// HipOpenMPCompatible is -hip-openmp-compatible.
	HipOpenMPCompatible bool
	// CheckInput is -check-input-archive: fail on a member whose bundle
	// IDs have conflicting target IDs.
	CheckInput bool
	// AllowMissing is -allow-missing-bundles: a target without code
	// objects gets an empty archive instead of an error.
	AllowMissing bool
	// ArchiveName names the input in messages.
	ArchiveName string
	// Open turns an archive member into an uncompressed bundle; nil uses the
	// member as it is. The CLI decompresses CCOB members here.
	Open func(member []byte) ([]byte, error)
}

// UnbundleArchive reads an archive of bundled objects and returns, for each
// target in opts.Targets, the members of its output archive, as
// clang-offload-bundler -type=a -unbundle does: each member's bundles (in
// the member's reading order) go to every compatible target, named
// "<stem>-<bundle ID><stem><ext>" with ':' replaced by '_', where ext is
// ".bc" if the bundle's target ID contains "gfx", ".cubin" if it contains
// "sm_", else the member's extension. Members that are not bundles are
// skipped. Write each result with objfile.WriteArchive.
func UnbundleArchive(ar []byte, opts ArchiveOptions) ([][]objfile.Member, error) {
	a, err := objfile.ParseArchive(ar)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", opts.ArchiveName, err)
	}
	targets := make([]ID, len(opts.Targets))
	for i, t := range opts.Targets {
		targets[i], _, _ = parseIDLoose(t)
	}
	out := make([][]objfile.Member, len(opts.Targets))
	found := make([]bool, len(opts.Targets))
	for _, m := range a.Members {
		data := m.Data
		if opts.Open != nil {
			if data, err = opts.Open(m.Data); err != nil {
				return nil, err
			}
		}
		entries, err := readEntries(data, "a")
		if err != nil {
			return nil, fmt.Errorf("%s(%s): %v", opts.ArchiveName, m.Name, err)
		}
		if opts.CheckInput {
			// clang passes the whole bundle IDs to the conflict check.
			ids := make([]string, len(entries))
			for i, e := range entries {
				ids[i] = e.ID
			}
			if x, y, bad := conflictingBundleIDs(ids); bad {
				return nil, fmt.Errorf("conflicting TargetIDs [%s, %s] found in %s of %s", x, y, m.Name, opts.ArchiveName)
			}
		}
		base := path.Base(m.Name)
		stem, ext := stemExt(base)
		for _, e := range entries {
			code, _, ok := parseIDLoose(e.ID)
			if !ok {
				return nil, fmt.Errorf("Invalid bundle id read from code object")
			}
			var payload []byte
			for i, t := range targets {
				if !Compatible(code, t, opts.HipOpenMPCompatible) {
					continue
				}
				if payload == nil {
					if payload, err = entryPayload(data, e); err != nil {
						return nil, err
					}
				}
				dext := ext
				if strings.Contains(code.TargetID, "gfx") {
					dext = ".bc"
				} else if strings.Contains(code.TargetID, "sm_") {
					dext = ".cubin"
				}
				name := strings.ReplaceAll(stem+"-"+e.ID+stem+dext, ":", "_")
				out[i] = append(out[i], objfile.Member{Name: name, Data: payload})
				found[i] = true
			}
		}
	}
	for i, t := range opts.Targets {
		if !found[i] && !opts.AllowMissing {
			return nil, fmt.Errorf("no compatible code object found for the target '%s' in heterogeneous archive library: %s", t, opts.ArchiveName)
		}
	}
	return out, nil
}

// conflictingBundleIDs applies clang's target-ID conflict check to whole
// bundle IDs, as CheckHeterogeneousArchive does.
func conflictingBundleIDs(ids []string) (string, string, bool) {
	return target.ConflictingIDs(ids)
}

// stemExt splits a file name like llvm::sys::path::stem and extension.
func stemExt(name string) (stem, ext string) {
	if name == "." || name == ".." {
		return name, ""
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return name, ""
	}
	return name[:i], name[i:]
}
