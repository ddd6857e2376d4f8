package packager

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/offcc/offcc/objfile"
)

// writeArchive builds the GNU ar archive llvm-offload-binary --archive
// writes: members named by their source buffer, with a "/" symbol table of
// the symbols each ELF member defines (objfile.WriteArchive writes LLVM's
// exact bytes). LLVM bitcode members, whose symbols LLVM reads with its IR
// reader, are an error.
func writeArchive(members []*namedImage) ([]byte, error) {
	ms := make([]objfile.Member, 0, len(members))
	for _, m := range members {
		if IsBitcode(m.Data) {
			return nil, errors.New("--archive: the symbol table of LLVM bitcode members is not supported")
		}
		ms = append(ms, objfile.Member{Name: m.source, Data: m.Data})
	}
	var out bytes.Buffer
	if err := objfile.WriteArchive(&out, ms); err != nil {
		return nil, fmt.Errorf("--archive: %w", err)
	}
	return out.Bytes(), nil
}
