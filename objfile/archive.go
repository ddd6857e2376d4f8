package objfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const (
	arMagic     = "!<arch>\n"
	arThinMagic = "!<thin>\n"
	arHdrSize   = 60
)

// Member is one file stored in an ar archive.
type Member struct {
	Name string // file name, without the GNU "/" terminator
	Data []byte // file contents
}

// Archive is a parsed ar archive. Special members (the symbol table and the
// long-name table) are not listed in Members.
type Archive struct {
	Members []Member

	// Set by ParseArchive: the raw archive symbol table and the archive
	// offsets of the members' headers, which the table refers to.
	symtab     []byte
	symtabKind symtabKind
	offsets    []uint64
}

type symtabKind int

const (
	symtabNone  symtabKind = iota
	symtabGNU              // "/": big-endian 32-bit count and offsets
	symtabGNU64            // "/SYM64/": big-endian 64-bit count and offsets
	symtabBSD              // "__.SYMDEF": little-endian ranlib structs
	symtabBSD64            // "__.SYMDEF_64": little-endian 64-bit ranlib structs
)

// IsArchive reports whether b starts with the ar archive magic string
// ("!<arch>\n"; thin archives, "!<thin>\n", count too).
func IsArchive(b []byte) bool {
	return bytes.HasPrefix(b, []byte(arMagic)) || bytes.HasPrefix(b, []byte(arThinMagic))
}

// ParseArchive parses an ar archive in GNU/SysV format (as written by GNU ar
// and llvm-ar, with "/" or "/SYM64/" symbol table, "//" long-name table and
// "/N" long-name references) or BSD format ("#1/N" names, "__.SYMDEF"
// symbol tables). Member data aliases b. Thin archives are rejected.
func ParseArchive(b []byte) (*Archive, error) {
	if bytes.HasPrefix(b, []byte(arThinMagic)) {
		return nil, errors.New("thin archives are not supported")
	}
	if !bytes.HasPrefix(b, []byte(arMagic)) {
		return nil, errors.New("not an ar archive: missing \"!<arch>\\n\" magic")
	}
	a := &Archive{}
	var longNames []byte
	var longStr string // one copy of longNames; long member names are substrings
	off := uint64(len(arMagic))
	n := uint64(len(b))
	for off < n {
		if off+1 == n && b[off] == '\n' {
			break // trailing padding byte
		}
		if n-off < arHdrSize {
			return nil, fmt.Errorf("archive member header at offset %#x: truncated (%d bytes left, header is 60)", off, n-off)
		}
		h := b[off : off+arHdrSize]
		if h[58] != '`' || h[59] != '\n' {
			return nil, fmt.Errorf("archive member header at offset %#x: bad terminator %q, want \"`\\n\"", off, h[58:60])
		}
		size, err := parseDecimal(h[48:58])
		if err != nil {
			return nil, fmt.Errorf("archive member header at offset %#x: bad size field %q", off, h[48:58])
		}
		dataOff := off + arHdrSize
		if size > n-dataOff {
			return nil, fmt.Errorf("archive member header at offset %#x: member data (size %d) runs past end of file", off, size)
		}
		data := b[dataOff : dataOff+size : dataOff+size]
		rawName := string(bytes.TrimRight(h[0:16], " "))
		hdrOff := off
		off = dataOff + size
		if off%2 == 1 && off < n {
			off++
		}

		var name string
		switch {
		case rawName == "/" || rawName == "/SYM64/":
			if a.symtabKind != symtabNone {
				continue // e.g. the second linker member of COFF import libraries
			}
			kind := symtabGNU
			if rawName == "/SYM64/" {
				kind = symtabGNU64
			}
			if err := checkSymtab(data, kind); err != nil {
				return nil, fmt.Errorf("archive symbol table at offset %#x: %v", hdrOff, err)
			}
			a.symtab, a.symtabKind = data, kind
			continue
		case rawName == "//":
			if longNames != nil {
				return nil, fmt.Errorf("archive member header at offset %#x: second long-name table", hdrOff)
			}
			longNames = data
			continue
		case strings.HasPrefix(rawName, "#1/"):
			l, err := parseDecimal([]byte(rawName[3:]))
			if err != nil || l > size {
				return nil, fmt.Errorf("archive member header at offset %#x: bad BSD name length %q", hdrOff, rawName)
			}
			name = string(bytes.TrimRight(data[:l], "\x00"))
			data = data[l:]
			if name == "__.SYMDEF" || name == "__.SYMDEF SORTED" || name == "__.SYMDEF_64" || name == "__.SYMDEF_64 SORTED" {
				if a.symtabKind == symtabNone {
					kind := symtabBSD
					if strings.HasPrefix(name, "__.SYMDEF_64") {
						kind = symtabBSD64
					}
					if checkSymtab(data, kind) == nil {
						a.symtab, a.symtabKind = data, kind
					}
				}
				continue
			}
		case rawName == "__.SYMDEF" || rawName == "__.SYMDEF SORTED":
			if a.symtabKind == symtabNone && checkSymtab(data, symtabBSD) == nil {
				a.symtab, a.symtabKind = data, symtabBSD
			}
			continue
		case len(rawName) > 1 && rawName[0] == '/' && rawName[1] >= '0' && rawName[1] <= '9':
			o, err := parseDecimal([]byte(rawName[1:]))
			if err != nil {
				return nil, fmt.Errorf("archive member header at offset %#x: bad long-name reference %q", hdrOff, rawName)
			}
			if longNames == nil {
				return nil, fmt.Errorf("archive member header at offset %#x: long-name reference %q but no \"//\" long-name table precedes it", hdrOff, rawName)
			}
			if o >= uint64(len(longNames)) {
				return nil, fmt.Errorf("archive member header at offset %#x: long-name reference %q past end of long-name table (size %d)", hdrOff, rawName, len(longNames))
			}
			e := bytes.IndexByte(longNames[o:], '\n')
			if e < 0 {
				return nil, fmt.Errorf("archive member header at offset %#x: long name at table offset %d is not terminated by a newline", hdrOff, o)
			}
			if longStr == "" {
				longStr = string(longNames)
			}
			name = strings.TrimSuffix(longStr[o:o+uint64(e)], "/")
		case strings.HasSuffix(rawName, "/"):
			name = rawName[:len(rawName)-1]
		default:
			name = rawName // BSD-style short name
		}
		a.Members = append(a.Members, Member{Name: name, Data: data})
		a.offsets = append(a.offsets, hdrOff)
	}
	return a, nil
}

// parseDecimal parses a space-padded decimal ar header field.
func parseDecimal(f []byte) (uint64, error) {
	f = bytes.TrimRight(f, " ")
	if len(f) == 0 || len(f) > 19 {
		return 0, errors.New("bad number")
	}
	var v uint64
	for _, c := range f {
		if c < '0' || c > '9' {
			return 0, errors.New("bad number")
		}
		v = v*10 + uint64(c-'0')
	}
	return v, nil
}

// symtabEntries decodes an archive symbol table, calling fn for each
// (name, member header offset) pair until fn returns false. It reports
// structural errors; the table was checked by checkSymtab before use.
func symtabEntries(d []byte, kind symtabKind, fn func(name string, off uint64) bool) error {
	be := binary.BigEndian
	switch kind {
	case symtabGNU, symtabGNU64:
		w := uint64(4)
		if kind == symtabGNU64 {
			w = 8
		}
		if uint64(len(d)) < w {
			return errors.New("truncated symbol count")
		}
		var count uint64
		if w == 4 {
			count = uint64(be.Uint32(d))
		} else {
			count = be.Uint64(d)
		}
		if count > (uint64(len(d))-w)/w {
			return fmt.Errorf("%d symbol offsets run past end of table (size %d)", count, len(d))
		}
		strs := d[w+count*w:]
		var str string
		pos := uint64(0)
		for i := uint64(0); i < count; i++ {
			var o uint64
			if w == 4 {
				o = uint64(be.Uint32(d[w+i*w:]))
			} else {
				o = be.Uint64(d[w+i*w:])
			}
			if pos >= uint64(len(strs)) {
				return fmt.Errorf("name of symbol %d runs past end of table", i)
			}
			e := bytes.IndexByte(strs[pos:], 0)
			if e < 0 {
				return fmt.Errorf("name of symbol %d is not NUL-terminated", i)
			}
			if fn != nil {
				if str == "" {
					str = string(strs)
				}
				if !fn(str[pos:pos+uint64(e)], o) {
					return nil
				}
			}
			pos += uint64(e) + 1
		}
		return nil
	case symtabBSD, symtabBSD64:
		w := uint64(4)
		if kind == symtabBSD64 {
			w = 8
		}
		get := func(b []byte) uint64 {
			if w == 4 {
				return uint64(binary.LittleEndian.Uint32(b))
			}
			return binary.LittleEndian.Uint64(b)
		}
		if uint64(len(d)) < w {
			return errors.New("truncated ranlib size")
		}
		rsize := get(d)
		if rsize > uint64(len(d))-w || rsize%(2*w) != 0 {
			return fmt.Errorf("bad ranlib table size %d (table size %d)", rsize, len(d))
		}
		rest := d[w+rsize:]
		if uint64(len(rest)) < w {
			return errors.New("truncated string table size")
		}
		ssize := get(rest)
		if ssize > uint64(len(rest))-w {
			return fmt.Errorf("string table size %d runs past end of table", ssize)
		}
		strs := rest[w : w+ssize]
		var str string
		for i := uint64(0); i < rsize/(2*w); i++ {
			e := d[w+i*2*w:]
			strx, o := get(e), get(e[w:])
			if strx >= uint64(len(strs)) {
				return fmt.Errorf("name of symbol %d out of range of string table", i)
			}
			end := bytes.IndexByte(strs[strx:], 0)
			if end < 0 {
				return fmt.Errorf("name of symbol %d is not NUL-terminated", i)
			}
			if fn != nil {
				if str == "" {
					str = string(strs)
				}
				if !fn(str[strx:strx+uint64(end)], o) {
					return nil
				}
			}
		}
		return nil
	}
	return nil
}

func checkSymtab(d []byte, kind symtabKind) error {
	return symtabEntries(d, kind, nil)
}

// SymbolIndex maps each symbol the archive's members define to the index in
// Members of the first member that defines it. It reads the archive symbol
// table ("/", "/SYM64/" or "__.SYMDEF") when ParseArchive found one and the
// member list was not changed since; otherwise it computes the map from the
// ELF members' defined global and weak symbols (see Symbols), skipping
// members that are not ELF objects or cannot be read.
func (a *Archive) SymbolIndex() map[string]int {
	idx := map[string]int{}
	if a.symtabKind != symtabNone && len(a.offsets) == len(a.Members) {
		byOff := make(map[uint64]int, len(a.offsets))
		for i, o := range a.offsets {
			byOff[o] = i
		}
		symtabEntries(a.symtab, a.symtabKind, func(name string, off uint64) bool {
			if i, ok := byOff[off]; ok {
				if _, dup := idx[name]; !dup {
					idx[name] = i
				}
			}
			return true
		})
		return idx
	}
	for i, m := range a.Members {
		if !IsELF(m.Data) {
			continue
		}
		def, _, err := Symbols(m.Data)
		if err != nil {
			continue
		}
		for _, s := range def {
			if _, dup := idx[s]; !dup {
				idx[s] = i
			}
		}
	}
	return idx
}

// WriteArchive writes members as a deterministic GNU-format ar archive, byte
// for byte what LLVM's archive writer produces for the same members:
// every header has mtime 0, uid 0, gid 0 and mode 644; names longer than 15
// bytes, or containing '/', go to a "//" long-name table. When at least one
// member is an ELF object (whose symbol table must be readable), the archive starts with
// a GNU "/" symbol table (or "/SYM64/" beyond 4 GiB) listing the global and
// weak symbols each ELF member defines, so that linkers can use the archive
// without running ranlib. Names must be non-empty and free of newlines and
// NUL bytes.
func WriteArchive(w io.Writer, members []Member) error {
	// Names and long-name table.
	var longNames bytes.Buffer
	longOff := map[string]int{}
	hdrNames := make([]string, len(members))
	for i, m := range members {
		if m.Name == "" {
			return fmt.Errorf("archive member %d: empty name", i)
		}
		if strings.ContainsAny(m.Name, "\n\x00") {
			return fmt.Errorf("archive member %d: name %q contains a newline or NUL byte", i, m.Name)
		}
		if uint64(len(m.Data)) > 9999999999 {
			return fmt.Errorf("archive member %s: %d bytes is too large for an ar header", m.Name, len(m.Data))
		}
		if len(m.Name) <= 15 && !strings.Contains(m.Name, "/") {
			hdrNames[i] = m.Name + "/"
			continue
		}
		// A name used by several members is stored once, as LLVM does.
		off, ok := longOff[m.Name]
		if !ok {
			off = longNames.Len()
			longOff[m.Name] = off
			longNames.WriteString(m.Name)
			longNames.WriteString("/\n")
		}
		hdrNames[i] = "/" + strconv.Itoa(off)
	}
	// LLVM counts the table's padding byte in its size.
	if longNames.Len()%2 == 1 {
		longNames.WriteByte('\n')
	}

	// Symbols.
	type symRef struct {
		name   string
		member int
	}
	var syms []symRef
	haveELF := false
	strSize := uint64(0)
	for i, m := range members {
		if !IsELF(m.Data) {
			continue
		}
		def, _, err := Symbols(m.Data)
		if err != nil {
			return fmt.Errorf("archive member %s: %v", m.Name, err)
		}
		haveELF = true
		for _, s := range def {
			syms = append(syms, symRef{s, i})
			strSize += uint64(len(s)) + 1
		}
	}

	// Layout.
	longSize := uint64(longNames.Len())
	memberSpan := func(start uint64) (offs []uint64, end uint64) {
		off := start
		if longSize > 0 {
			off += arHdrSize + longSize // even: the table is padded
		}
		offs = make([]uint64, len(members))
		for i, m := range members {
			offs[i] = off
			sz := uint64(len(m.Data))
			off += arHdrSize + sz + sz%2
		}
		return offs, off
	}
	var symtab []byte
	symName := "/"
	if haveELF {
		wd := uint64(4)
		if len(syms) == 0 {
			strSize = 3 // placeholder names, as LLVM writes them
		}
		symSize := func() uint64 {
			s := wd + wd*uint64(len(syms)) + strSize
			return s + s%2
		}
		start := uint64(len(arMagic)) + arHdrSize + symSize()
		offs, end := memberSpan(start)
		if end > 0xffffffff {
			wd, symName = 8, "/SYM64/"
			offs, _ = memberSpan(uint64(len(arMagic)) + arHdrSize + symSize())
		}
		symtab = make([]byte, 0, symSize())
		put := func(v uint64) {
			if wd == 4 {
				symtab = binary.BigEndian.AppendUint32(symtab, uint32(v))
			} else {
				symtab = binary.BigEndian.AppendUint64(symtab, v)
			}
		}
		put(uint64(len(syms)))
		for _, s := range syms {
			put(offs[s.member])
		}
		for _, s := range syms {
			symtab = append(symtab, s.name...)
			symtab = append(symtab, 0)
		}
		if len(syms) == 0 {
			// LLVM's empty string table is three NULs.
			symtab = append(symtab, 0, 0, 0)
		}
		if len(symtab)%2 == 1 {
			symtab = append(symtab, 0)
		}
	}

	bw := bufio.NewWriter(w)
	bw.WriteString(arMagic)
	if haveELF {
		writeArHeader(bw, symName, "0", "0", "0", "0", uint64(len(symtab)))
		bw.Write(symtab)
	}
	if longSize > 0 {
		writeArHeader(bw, "//", "", "", "", "", longSize)
		bw.Write(longNames.Bytes())
	}
	for i, m := range members {
		writeArHeader(bw, hdrNames[i], "0", "0", "0", "644", uint64(len(m.Data)))
		bw.Write(m.Data)
		if len(m.Data)%2 == 1 {
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

func writeArHeader(w *bufio.Writer, name, mtime, uid, gid, mode string, size uint64) {
	fmt.Fprintf(w, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", name, mtime, uid, gid, mode, size)
}
