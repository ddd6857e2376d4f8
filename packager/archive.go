package packager

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/offcc/offcc/objfile"
)

// writeArchive builds the GNU ar archive llvm-offload-binary --archive
// writes (LLVM's writeArchive with a normal symbol table, deterministic
// headers, not thin): members named by their source buffer, a "/" symbol
// table when any member is an ELF object, names that are 16 bytes or longer
// or contain '/' in a "//" table. The symbols of an ELF member are those
// objfile.Symbols reports as defined (global, weak and unique symbols).
//
// objfile.WriteArchive is not used because its output is not LLVM's: it
// writes a repeated long name once per member (LLVM writes it once), leaves
// the "//" table's padding byte out of its size, and writes no placeholder
// names for an empty symbol table.
func writeArchive(members []*namedImage) ([]byte, error) {
	type member struct {
		name string
		data []byte
		syms []string
	}
	var ms []member
	hasObject := false
	var symNames bytes.Buffer
	numSyms := 0
	for _, m := range members {
		mm := member{name: m.source, data: m.Data}
		switch {
		case isBitcode(m.Data):
			return nil, errors.New("--archive: the symbol table of LLVM bitcode members is not supported")
		case objfile.IsELF(m.Data):
			syms, _, err := objfile.Symbols(m.Data)
			if err != nil {
				return nil, fmt.Errorf("--archive: member %s: %w", m.source, err)
			}
			hasObject = true
			mm.syms = syms
			for _, s := range syms {
				symNames.WriteString(s)
				symNames.WriteByte(0)
			}
			numSyms += len(syms)
		}
		ms = append(ms, mm)
	}
	if hasObject && symNames.Len() == 0 {
		symNames.WriteString("\x00\x00\x00")
	}

	var longNames bytes.Buffer
	nameField := make([]string, len(ms))
	seen := map[string]int{}
	for i, m := range ms {
		if len(m.name) >= 16 || bytes.ContainsRune([]byte(m.name), '/') {
			o, ok := seen[m.name]
			if !ok {
				o = longNames.Len()
				seen[m.name] = o
				longNames.WriteString(m.name + "/\n")
			}
			nameField[i] = "/" + strconv.Itoa(o)
		} else {
			nameField[i] = m.name + "/"
		}
	}
	if longNames.Len()%2 == 1 {
		longNames.WriteByte('\n')
	}

	header := func(out *bytes.Buffer, name, mode string, size int) {
		fmt.Fprintf(out, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", name, "0", "0", "0", mode, size)
	}
	symtabSize := 0
	if hasObject {
		symtabSize = 4 + 4*numSyms + symNames.Len()
		symtabSize += symtabSize % 2
	}
	off := 8
	if hasObject {
		off += 60 + symtabSize
	}
	if longNames.Len() > 0 {
		off += 60 + longNames.Len()
	}
	offsets := make([]int, len(ms))
	for i, m := range ms {
		offsets[i] = off
		off += 60 + len(m.data) + len(m.data)%2
	}
	if off > 1<<32-1 {
		return nil, errors.New("--archive: archive larger than 4 GiB is not supported")
	}

	var out bytes.Buffer
	out.WriteString("!<arch>\n")
	if hasObject {
		header(&out, "/", "0", symtabSize)
		binary.Write(&out, binary.BigEndian, uint32(numSyms))
		for i, m := range ms {
			for range m.syms {
				binary.Write(&out, binary.BigEndian, uint32(offsets[i]))
			}
		}
		out.Write(symNames.Bytes())
		if (4+4*numSyms+symNames.Len())%2 == 1 {
			out.WriteByte(0)
		}
	}
	if longNames.Len() > 0 {
		fmt.Fprintf(&out, "%-48s%-10d`\n", "//", longNames.Len())
		out.Write(longNames.Bytes())
	}
	for i, m := range ms {
		header(&out, nameField[i], "644", len(m.data))
		out.Write(m.data)
		if len(m.data)%2 == 1 {
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), nil
}
