package objfile

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoIRSymbolTable is wrapped by the errors ImageSymbols returns for
// bitcode without an IR symbol table it can use: none at all, or one that
// LLVM 22 would not trust and would rebuild from the IR (another format
// version or producer, or one whose module count differs from the file's,
// as after binary concatenation with llvm-cat -b).
var ErrNoIRSymbolTable = errors.New("no IR symbol table")

// Bitcode constants (llvm/Bitcode/LLVMBitCodes.h, llvm/Bitstream).
const (
	bcMagic        = "BC\xc0\xde"
	bcWrapperMagic = "\xde\xc0\x17\x0b" // 0x0B17C0DE, little-endian

	bcEndBlock      = 0
	bcEnterSubblock = 1
	bcDefineAbbrev  = 2
	bcUnabbrevRec   = 3

	bcBlockModule         = 8
	bcBlockIdentification = 13
	bcBlockStrtab         = 23
	bcBlockSymtab         = 25
	bcBlobRecord          = 1 // STRTAB_BLOB and SYMTAB_BLOB

	// bcMaxChunk bounds the widths of fixed and VBR operands and of
	// abbreviation IDs (LLVM's BitstreamCursor reads VBR chunks of at most
	// 32 bits; writers use far narrower fields).
	bcMaxChunk = 32
)

// Abbreviation operand encodings; opLiteral stands for a literal value.
const (
	opLiteral = 0
	opFixed   = 1
	opVBR     = 2
	opArray   = 3
	opChar6   = 4
	opBlob    = 5
)

// IR symbol table constants (llvm/Object/IRSymtab.h, namespace storage;
// LLVM 22 writes and reads version 3, the header's kCurrentVersion).
const (
	irsymtabVersion = 3
	// irsymtabProducer is the start of the producer strings (LLVM
	// version strings, "22.1.8" for clang 22.1.8) accepted. LLVM itself
	// trusts only its own exact version string; any LLVM 22 release is
	// accepted here.
	irsymtabProducer = "22."
	irHeaderSize     = 76 // Version, Producer, 4 ranges, 3 strings, 1 range
	irModuleSize     = 12 // Begin, End, UncBegin
	irSymbolSize     = 24 // Name, IRName, ComdatIndex, Flags

	irFBVisibility     = 0 // 2 bits: 0 default, 1 hidden, 2 protected
	irFBUndefined      = 3
	irFBWeak           = 4
	irFBMayOmit        = 9
	irFBGlobal         = 10
	irFBFormatSpecific = 11
)

// isBitcodeMagic reports whether b starts like LLVM bitcode, raw or in the
// wrapper (LLVM's file_magic::bitcode).
func isBitcodeMagic(b []byte) bool {
	return len(b) >= 4 && (string(b[:4]) == bcMagic || string(b[:4]) == bcWrapperMagic)
}

// bitReader reads an LLVM bitstream: fields of up to 64 bits, least
// significant bit first.
type bitReader struct {
	b   []byte
	pos uint64 // bit position
}

func (r *bitReader) end() uint64 { return uint64(len(r.b)) * 8 }

func (r *bitReader) atEnd() bool { return r.pos >= r.end() }

func (r *bitReader) read(n uint) (uint64, error) {
	if r.pos > r.end() || uint64(n) > r.end()-r.pos {
		return 0, fmt.Errorf("bitcode: unexpected end of data reading %d bits at bit %d", n, r.pos)
	}
	var v uint64
	for i := uint(0); i < n; {
		bit := uint(r.pos & 7)
		take := min(8-bit, n-i)
		v |= (uint64(r.b[r.pos>>3]>>bit) & (1<<take - 1)) << i
		i += take
		r.pos += uint64(take)
	}
	return v, nil
}

// vbr reads a variable bit rate value in chunks of n bits (1 to 32), as
// LLVM's ReadVBR (limit 32) and ReadVBR64 (limit 64) do.
func (r *bitReader) vbr(n, limit uint) (uint64, error) {
	mask := uint64(1) << (n - 1)
	var v uint64
	for shift := uint(0); ; shift += n - 1 {
		if shift >= limit {
			return 0, fmt.Errorf("bitcode: unterminated VBR value at bit %d", r.pos)
		}
		piece, err := r.read(n)
		if err != nil {
			return 0, err
		}
		v |= (piece & (mask - 1)) << shift
		if piece&mask == 0 {
			return v, nil
		}
	}
}

func (r *bitReader) align32() { r.pos = (r.pos + 31) &^ 31 }

// abbrevOp is one operand of an abbreviation: a literal value, or an
// encoding with its width (fixed and VBR).
type abbrevOp struct {
	enc uint8
	val uint64
}

type abbrev []abbrevOp

// Kinds of bitstream entries advance returns.
const (
	entryEndBlock = iota
	entrySubBlock
	entryRecord
)

// advance reads abbreviation IDs of width bits, adding the abbreviations
// defined to abbrevs, up to the next block end, sub-block (id: its block
// ID) or record (id: its abbreviation ID).
func (r *bitReader) advance(width uint, abbrevs *[]abbrev) (kind int, id uint64, err error) {
	for {
		if r.atEnd() {
			return 0, 0, fmt.Errorf("bitcode: malformed block: data ends at bit %d inside a block", r.pos)
		}
		code, err := r.read(width)
		if err != nil {
			return 0, 0, err
		}
		switch code {
		case bcEndBlock:
			return entryEndBlock, 0, nil
		case bcEnterSubblock:
			id, err := r.vbr(8, 32)
			return entrySubBlock, id, err
		case bcDefineAbbrev:
			a, err := r.readAbbrev()
			if err != nil {
				return 0, 0, err
			}
			*abbrevs = append(*abbrevs, a)
		default:
			return entryRecord, code, nil
		}
	}
}

// readAbbrev reads the body of a DEFINE_ABBREV record. Each operand reads
// at least four bits, so the result is bounded by the input size.
func (r *bitReader) readAbbrev() (abbrev, error) {
	numOps, err := r.vbr(5, 32)
	if err != nil {
		return nil, err
	}
	var a abbrev
	for i := uint64(0); i < numOps; i++ {
		lit, err := r.read(1)
		if err != nil {
			return nil, err
		}
		if lit == 1 {
			v, err := r.vbr(8, 64)
			if err != nil {
				return nil, err
			}
			a = append(a, abbrevOp{enc: opLiteral, val: v})
			continue
		}
		enc, err := r.read(3)
		if err != nil {
			return nil, err
		}
		switch enc {
		case opFixed, opVBR:
			w, err := r.vbr(5, 64)
			if err != nil {
				return nil, err
			}
			if w == 0 { // fixed(0) and vbr(0) read as literal zeros
				a = append(a, abbrevOp{enc: opLiteral})
				continue
			}
			if w > bcMaxChunk {
				return nil, fmt.Errorf("bitcode: abbreviation operand width %d is larger than %d", w, bcMaxChunk)
			}
			a = append(a, abbrevOp{enc: uint8(enc), val: w})
		case opArray, opChar6, opBlob:
			a = append(a, abbrevOp{enc: uint8(enc)})
		default:
			return nil, fmt.Errorf("bitcode: invalid abbreviation operand encoding %d at bit %d", enc, r.pos)
		}
	}
	if len(a) == 0 {
		return nil, errors.New("bitcode: abbreviation with no operands")
	}
	return a, nil
}

// field reads one scalar operand.
func (r *bitReader) field(op abbrevOp) (uint64, error) {
	switch op.enc {
	case opFixed:
		return r.read(uint(op.val))
	case opVBR:
		return r.vbr(uint(op.val), 64)
	case opChar6:
		v, err := r.read(6)
		return uint64(char6[v]), err
	}
	return op.val, nil
}

// char6 decodes the Char6 encoding.
const char6 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._"

// plausible reports whether a count of n elements could fit in the
// bitstream, as LLVM's isSizePlausible does.
func (r *bitReader) plausible(n uint64) error {
	if n >= r.end() {
		return fmt.Errorf("bitcode: element count %d at bit %d is not plausible", n, r.pos)
	}
	return nil
}

// readRecord reads a record with abbreviation ID id and returns its code
// and its blob operand, if any (aliasing the input). Operand values are
// read and dropped.
func (r *bitReader) readRecord(id uint64, abbrevs []abbrev) (code uint64, blob []byte, err error) {
	if id == bcUnabbrevRec {
		if code, err = r.vbr(6, 32); err != nil {
			return 0, nil, err
		}
		n, err := r.vbr(6, 32)
		if err != nil {
			return 0, nil, err
		}
		if err := r.plausible(n); err != nil {
			return 0, nil, err
		}
		for ; n > 0; n-- {
			if _, err := r.vbr(6, 64); err != nil {
				return 0, nil, err
			}
		}
		return code, nil, nil
	}
	if id < 4 || id-4 >= uint64(len(abbrevs)) {
		return 0, nil, fmt.Errorf("bitcode: invalid abbreviation ID %d at bit %d", id, r.pos)
	}
	a := abbrevs[id-4]
	switch a[0].enc {
	case opLiteral:
		code = a[0].val
	case opArray, opBlob:
		return 0, nil, errors.New("bitcode: abbreviation starts with an array or a blob")
	default:
		if code, err = r.field(a[0]); err != nil {
			return 0, nil, err
		}
	}
	for i := 1; i < len(a); i++ {
		switch op := a[i]; op.enc {
		case opLiteral:
		case opFixed, opVBR, opChar6:
			if _, err := r.field(op); err != nil {
				return 0, nil, err
			}
		case opArray:
			n, err := r.vbr(6, 32)
			if err != nil {
				return 0, nil, err
			}
			if err := r.plausible(n); err != nil {
				return 0, nil, err
			}
			if i+2 != len(a) {
				return 0, nil, errors.New("bitcode: array operand is not second to last in its abbreviation")
			}
			i++
			elt := a[i]
			switch elt.enc {
			case opFixed, opVBR, opChar6:
			case opLiteral:
				return 0, nil, errors.New("bitcode: array element type is not an encoding")
			default:
				return 0, nil, errors.New("bitcode: array element type is an array or a blob")
			}
			for ; n > 0; n-- {
				if _, err := r.field(elt); err != nil {
					return 0, nil, err
				}
			}
		case opBlob:
			n, err := r.vbr(6, 32)
			if err != nil {
				return 0, nil, err
			}
			r.align32()
			start, end := r.pos/8, r.pos+(n+3)/4*32
			if r.pos > r.end() || end > r.end() {
				return 0, nil, fmt.Errorf("bitcode: blob of %d bytes at bit %d runs past the end of the data", n, r.pos)
			}
			r.pos = end
			blob = r.b[start : start+n : start+n]
		}
	}
	return code, blob, nil
}

// enterBlock reads the header of a sub-block after its block ID and
// returns its abbreviation ID width.
func (r *bitReader) enterBlock() (uint, error) {
	w, err := r.vbr(4, 32)
	if err != nil {
		return 0, err
	}
	if w > bcMaxChunk {
		return 0, fmt.Errorf("bitcode: block abbreviation width %d is larger than %d", w, bcMaxChunk)
	}
	r.align32()
	if _, err := r.read(32); err != nil { // block length, unused
		return 0, err
	}
	if w == 0 {
		return 0, errors.New("bitcode: block with abbreviation width 0")
	}
	if r.atEnd() {
		return 0, errors.New("bitcode: block starts at the end of the data")
	}
	return uint(w), nil
}

// skipBlock skips a sub-block, after its block ID, by its length.
func (r *bitReader) skipBlock() error {
	if _, err := r.vbr(4, 32); err != nil {
		return err
	}
	r.align32()
	words, err := r.read(32)
	if err != nil {
		return err
	}
	if r.atEnd() {
		return errors.New("bitcode: block starts at the end of the data")
	}
	to := r.pos + words*32
	if to > r.end() {
		return fmt.Errorf("bitcode: block of %d words at bit %d runs past the end of the data", words, r.pos)
	}
	r.pos = to
	return nil
}

// readBlob reads a block (after its block ID) and returns the blob of its
// last record with code bcBlobRecord, as LLVM's readBlobInRecord does.
func (r *bitReader) readBlob() ([]byte, error) {
	width, err := r.enterBlock()
	if err != nil {
		return nil, err
	}
	var abbrevs []abbrev
	var blob []byte
	for {
		kind, id, err := r.advance(width, &abbrevs)
		if err != nil {
			return nil, err
		}
		switch kind {
		case entryEndBlock:
			r.align32()
			return blob, nil
		case entrySubBlock:
			if err := r.skipBlock(); err != nil {
				return nil, err
			}
		case entryRecord:
			code, b, err := r.readRecord(id, abbrevs)
			if err != nil {
				return nil, err
			}
			if uint32(code) == bcBlobRecord {
				blob = b
			}
		}
	}
}

// bitcodeSymbols reads the IR symbol table of a bitcode file the way
// LLVM's readIRSymtab does (getBitcodeFileContents, then
// irsymtab::readBitcode), but never rebuilds the table from the IR.
func bitcodeSymbols(data []byte) ([]Symbol, error) {
	if len(data)%4 != 0 {
		return nil, fmt.Errorf("bitcode: size %d is not a multiple of 4", len(data))
	}
	bc := data
	if string(data[:4]) == bcWrapperMagic {
		if len(data) < 16 {
			return nil, errors.New("bitcode: wrapper header is truncated")
		}
		off, size := uint64(le.Uint32(data[8:])), uint64(le.Uint32(data[12:]))
		if off+size > uint64(len(data)) {
			return nil, fmt.Errorf("bitcode: wrapper header places the bitcode (offset %#x, size %#x) past the end of the file (size %#x)", off, size, len(data))
		}
		bc = data[off : off+size]
	}
	if len(bc) < 4 || string(bc[:4]) != bcMagic {
		return nil, errors.New("bitcode: invalid signature")
	}
	r := &bitReader{b: bc, pos: 32}
	var top []abbrev
	var symtab, strtab []byte
	mods := 0
	// Like LLVM, stop where too few bytes are left for another module
	// (some tools pad the file).
	for r.pos/8+8 < uint64(len(bc)) {
		kind, id, err := r.advance(2, &top)
		if err != nil {
			return nil, err
		}
		switch kind {
		case entryEndBlock:
			return nil, fmt.Errorf("bitcode: malformed block: END_BLOCK at top level at bit %d", r.pos)
		case entryRecord:
			if _, _, err := r.readRecord(id, top); err != nil {
				return nil, err
			}
			continue
		}
		if id == bcBlockIdentification {
			if err := r.skipBlock(); err != nil {
				return nil, err
			}
			kind, id, err = r.advance(2, &top)
			if err != nil {
				return nil, err
			}
			if kind != entrySubBlock || id != bcBlockModule {
				return nil, errors.New("bitcode: malformed block: identification block not followed by a module")
			}
		}
		switch id {
		case bcBlockModule:
			if err := r.skipBlock(); err != nil {
				return nil, err
			}
			mods++
		case bcBlockStrtab:
			b, err := r.readBlob()
			if err != nil {
				return nil, err
			}
			// The string table of the symbol table is the first one
			// after it.
			if len(symtab) > 0 && len(strtab) == 0 {
				strtab = b
			}
		case bcBlockSymtab:
			b, err := r.readBlob()
			if err != nil {
				return nil, err
			}
			if len(symtab) == 0 {
				symtab = b
			}
		default:
			if err := r.skipBlock(); err != nil {
				return nil, err
			}
		}
	}
	if mods == 0 {
		return nil, errors.New("bitcode: file does not contain any modules")
	}
	return irSymbols(symtab, strtab, mods)
}

// irStr returns the string of the storage::Str at b.
func irStr(strtab []byte, strs string, b []byte) (string, bool) {
	off, n := uint64(le.Uint32(b)), uint64(le.Uint32(b[4:]))
	if off > uint64(len(strtab)) || n > uint64(len(strtab))-off {
		return "", false
	}
	return strs[off : off+n], true
}

// irRange returns the bytes of the storage::Range at offset at of the
// symbol table's header, for elements of size elem.
func irRange(symtab []byte, at int, elem uint64, what string) ([]byte, error) {
	off, n := uint64(le.Uint32(symtab[at:])), uint64(le.Uint32(symtab[at+4:]))
	if off > uint64(len(symtab)) || n > (uint64(len(symtab))-off)/elem {
		return nil, fmt.Errorf("bitcode: IR symbol table: %s (offset %#x, %d entries) run past its end (size %#x)", what, off, n, len(symtab))
	}
	return symtab[off : off+n*elem], nil
}

// irSymbols decodes an IR symbol table (storage::Header and what it
// points to) and returns the symbols of its modules.
func irSymbols(symtab, strtab []byte, mods int) ([]Symbol, error) {
	if len(symtab) == 0 {
		return nil, fmt.Errorf("bitcode: %w (no SYMTAB block)", ErrNoIRSymbolTable)
	}
	if len(strtab) == 0 {
		return nil, fmt.Errorf("bitcode: %w (no string table after the SYMTAB block)", ErrNoIRSymbolTable)
	}
	if len(symtab) < irHeaderSize {
		return nil, fmt.Errorf("bitcode: %w (symbol table of %d bytes is shorter than its header)", ErrNoIRSymbolTable, len(symtab))
	}
	if v := le.Uint32(symtab); v != irsymtabVersion {
		return nil, fmt.Errorf("bitcode: %w (symbol table version %d, LLVM 22 reads version %d)", ErrNoIRSymbolTable, v, irsymtabVersion)
	}
	strs := string(strtab) // one copy; names are substrings of it
	producer, ok := irStr(strtab, strs, symtab[4:])
	if !ok {
		return nil, fmt.Errorf("bitcode: %w (producer string out of range of the string table)", ErrNoIRSymbolTable)
	}
	if !strings.HasPrefix(producer, irsymtabProducer) {
		return nil, fmt.Errorf("bitcode: %w (symbol table written by LLVM %q, not LLVM 22)", ErrNoIRSymbolTable, producer)
	}
	if n := le.Uint32(symtab[16:]); uint64(n) != uint64(mods) {
		return nil, fmt.Errorf("bitcode: %w (symbol table describes %d modules, the file has %d)", ErrNoIRSymbolTable, n, mods)
	}
	modules, err := irRange(symtab, 12, irModuleSize, "modules")
	if err != nil {
		return nil, err
	}
	symbols, err := irRange(symtab, 28, irSymbolSize, "symbols")
	if err != nil {
		return nil, err
	}
	nsyms := uint64(len(symbols)) / irSymbolSize
	// Modules normally cover disjoint ranges; bounding their sum keeps the
	// result proportional to the input.
	total := uint64(0)
	for m := 0; m < mods; m++ {
		begin, end := uint64(le.Uint32(modules[m*irModuleSize:])), uint64(le.Uint32(modules[m*irModuleSize+4:]))
		if begin > end || end > nsyms {
			return nil, fmt.Errorf("bitcode: IR symbol table: module %d symbols %d to %d out of range (%d symbols)", m, begin, end, nsyms)
		}
		total += end - begin
	}
	if total > nsyms {
		return nil, fmt.Errorf("bitcode: IR symbol table: module symbol ranges overlap (%d symbols in modules, %d in the table)", total, nsyms)
	}
	syms := make([]Symbol, 0, total)
	for m := 0; m < mods; m++ {
		begin, end := uint64(le.Uint32(modules[m*irModuleSize:])), uint64(le.Uint32(modules[m*irModuleSize+4:]))
		for k := begin; k < end; k++ {
			e := symbols[k*irSymbolSize:]
			name, ok := irStr(strtab, strs, e)
			if !ok {
				return nil, fmt.Errorf("bitcode: IR symbol table: name of symbol %d out of range of the string table", k)
			}
			fl := le.Uint32(e[20:])
			bit := func(b uint) bool { return fl>>b&1 != 0 }
			syms = append(syms, Symbol{
				Name:           name,
				Undefined:      bit(irFBUndefined),
				Weak:           bit(irFBWeak),
				Global:         bit(irFBGlobal),
				Hidden:         fl>>irFBVisibility&3 == 1,
				FormatSpecific: bit(irFBFormatSpecific),
				MayOmit:        bit(irFBMayOmit),
			})
		}
	}
	return syms, nil
}
