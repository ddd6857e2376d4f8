// Package spirv reads the parts of a SPIR-V binary module that a linker
// driver needs: the header, the entry points (for SYCL and OpenCL, the
// kernels) and the symbols named by LinkageAttributes decorations.
//
// Parse accepts either byte order, as told by the magic number, checks every
// instruction's extent and every string it decodes against the input, and
// never panics; its errors are one line starting with "spirv: ". It does not
// validate the module beyond what it reads (spirv-val does that).
//
// The reference is the SPIR-V specification, sections 2.3 (physical layout),
// 2.2.1 (literal strings), 3.6 (execution models), 3.20 (decorations) and
// 3.26 (linkage types).
package spirv

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// Magic is the SPIR-V magic number, the first word of every module.
const Magic uint32 = 0x07230203

// HeaderWords is the number of words in the module header.
const HeaderWords = 5

// Opcodes that Parse reads.
const (
	OpEntryPoint = 15
	OpDecorate   = 71
)

// DecorationLinkageAttributes is the decoration that gives a global object
// or function a linkage name and type.
const DecorationLinkageAttributes = 41

// ExecutionModel is the execution model of an entry point.
type ExecutionModel uint32

// Execution models (SPIR-V section 3.6), the graphics ones included for
// messages.
const (
	ExecutionModelVertex                 ExecutionModel = 0
	ExecutionModelTessellationControl    ExecutionModel = 1
	ExecutionModelTessellationEvaluation ExecutionModel = 2
	ExecutionModelGeometry               ExecutionModel = 3
	ExecutionModelFragment               ExecutionModel = 4
	ExecutionModelGLCompute              ExecutionModel = 5
	ExecutionModelKernel                 ExecutionModel = 6
)

var executionModelNames = [...]string{"Vertex", "TessellationControl", "TessellationEvaluation",
	"Geometry", "Fragment", "GLCompute", "Kernel"}

// String returns the model's name as spirv-dis writes it, or its number.
func (e ExecutionModel) String() string {
	if int(e) < len(executionModelNames) {
		return executionModelNames[e]
	}
	return fmt.Sprintf("ExecutionModel(%d)", uint32(e))
}

// LinkageType is the linkage type of a LinkageAttributes decoration.
type LinkageType uint32

// Linkage types (SPIR-V section 3.26).
const (
	LinkageExport      LinkageType = 0 // defined here, visible to other modules
	LinkageImport      LinkageType = 1 // declared here, defined in another module
	LinkageLinkOnceODR LinkageType = 2 // defined here; equal definitions elsewhere are merged
)

// String returns the linkage type's name as spirv-dis writes it, or its
// number.
func (l LinkageType) String() string {
	switch l {
	case LinkageExport:
		return "Export"
	case LinkageImport:
		return "Import"
	case LinkageLinkOnceODR:
		return "LinkOnceODR"
	}
	return fmt.Sprintf("LinkageType(%d)", uint32(l))
}

// Module is what Parse reads from a SPIR-V module.
type Module struct {
	BigEndian bool   // the words are stored big-endian
	Version   uint32 // header version word: 0x00MMmm00 for SPIR-V MM.mm
	Generator uint32 // generator magic: tool id in the high 16 bits, its version in the low 16
	Bound     uint32 // all result ids are below Bound
	Schema    uint32 // reserved instruction schema, 0

	EntryPoints []EntryPoint // OpEntryPoint instructions, in module order
	Linkage     []Linkage    // LinkageAttributes decorations, in module order
}

// EntryPoint is one OpEntryPoint instruction.
type EntryPoint struct {
	ExecutionModel ExecutionModel
	Function       uint32 // result id of the entry point's OpFunction
	Name           string
}

// Linkage is one OpDecorate ... LinkageAttributes instruction.
type Linkage struct {
	Target uint32 // id of the decorated object (or decoration group)
	Name   string
	Type   LinkageType
}

// MajorVersion returns the major SPIR-V version from the header.
func (m *Module) MajorVersion() int { return int(m.Version >> 16 & 0xff) }

// MinorVersion returns the minor SPIR-V version from the header.
func (m *Module) MinorVersion() int { return int(m.Version >> 8 & 0xff) }

// Kernels returns the names of the entry points with execution model
// Kernel, in module order, each once.
func (m *Module) Kernels() []string {
	var names []string
	seen := map[string]bool{}
	for _, e := range m.EntryPoints {
		if e.ExecutionModel == ExecutionModelKernel && !seen[e.Name] {
			seen[e.Name] = true
			names = append(names, e.Name)
		}
	}
	return names
}

// Exports returns the names this module defines for other modules to use:
// those decorated with linkage type Export or LinkOnceODR, in module order,
// each once.
func (m *Module) Exports() []string {
	return m.linkageNames(func(t LinkageType) bool { return t == LinkageExport || t == LinkageLinkOnceODR })
}

// Imports returns the names this module expects another module to define:
// those decorated with linkage type Import, in module order, each once.
func (m *Module) Imports() []string {
	return m.linkageNames(func(t LinkageType) bool { return t == LinkageImport })
}

func (m *Module) linkageNames(want func(LinkageType) bool) []string {
	var names []string
	seen := map[string]bool{}
	for _, l := range m.Linkage {
		if want(l.Type) && !seen[l.Name] {
			seen[l.Name] = true
			names = append(names, l.Name)
		}
	}
	return names
}

// Error is a malformed-module error. Word is the index of the offending
// instruction's first word, counted from the start of the module, or -1 for
// an error in the module as a whole.
type Error struct {
	Word   int
	Reason string
}

// Error returns the one-line message, starting with "spirv: ".
func (e *Error) Error() string {
	if e.Word < 0 {
		return "spirv: " + e.Reason
	}
	return fmt.Sprintf("spirv: instruction at word %d %s", e.Word, e.Reason)
}

// Parse reads a SPIR-V binary module. The byte order is taken from the
// magic number; the length must be a whole number of words. Every
// instruction's word count must be at least 1 and fit in the module. Entry
// point and linkage names must be nul-terminated UTF-8 inside their
// instruction, and their ids must be nonzero and below the header's bound.
func Parse(b []byte) (*Module, error) {
	if len(b)%4 != 0 {
		return nil, &Error{Word: -1, Reason: fmt.Sprintf("input is %d bytes, not a whole number of 4-byte words", len(b))}
	}
	if len(b) < 4*HeaderWords {
		return nil, &Error{Word: -1, Reason: fmt.Sprintf("input is %d bytes, shorter than the %d-byte header", len(b), 4*HeaderWords)}
	}
	m := &Module{}
	var order binary.ByteOrder
	switch magic := binary.LittleEndian.Uint32(b); magic {
	case Magic:
		order = binary.LittleEndian
	case 0x03022307:
		order = binary.BigEndian
		m.BigEndian = true
	default:
		return nil, &Error{Word: -1, Reason: fmt.Sprintf("not a SPIR-V module: first word is %#08x, want magic number %#08x", magic, Magic)}
	}
	n := len(b) / 4
	word := func(i int) uint32 { return order.Uint32(b[4*i:]) }
	m.Version = word(1)
	m.Generator = word(2)
	m.Bound = word(3)
	m.Schema = word(4)

	for at := HeaderWords; at < n; {
		w0 := word(at)
		count, op := int(w0>>16), w0&0xffff
		if count == 0 {
			return nil, &Error{Word: at, Reason: fmt.Sprintf("(opcode %d) has word count 0", op)}
		}
		if count > n-at {
			return nil, &Error{Word: at, Reason: fmt.Sprintf("(opcode %d) has word count %d, runs past the end of the module (%d words left)", op, count, n-at)}
		}
		in := inst{order: order, b: b[4*at : 4*(at+count)], at: at, name: opName(op), bound: m.Bound}
		switch op {
		case OpEntryPoint:
			e, err := in.entryPoint()
			if err != nil {
				return nil, err
			}
			m.EntryPoints = append(m.EntryPoints, e)
		case OpDecorate:
			l, ok, err := in.linkage()
			if err != nil {
				return nil, err
			}
			if ok {
				m.Linkage = append(m.Linkage, l)
			}
		}
		at += count
	}
	return m, nil
}

func opName(op uint32) string {
	switch op {
	case OpEntryPoint:
		return "OpEntryPoint"
	case OpDecorate:
		return "OpDecorate"
	}
	return fmt.Sprintf("opcode %d", op)
}

// inst is one instruction's words.
type inst struct {
	order binary.ByteOrder
	b     []byte // the instruction, word 0 included
	at    int    // index of its first word in the module
	name  string // opcode name for messages
	bound uint32
}

func (in *inst) words() int        { return len(in.b) / 4 }
func (in *inst) word(i int) uint32 { return in.order.Uint32(in.b[4*i:]) }

func (in *inst) errorf(format string, args ...any) error {
	return &Error{Word: in.at, Reason: "(" + in.name + ") " + fmt.Sprintf(format, args...)}
}

// need checks that the instruction has at least k words.
func (in *inst) need(k int, what string) error {
	if in.words() < k {
		return in.errorf("has word count %d, too short for %s", in.words(), what)
	}
	return nil
}

// id returns word i as an id, checked against the bound.
func (in *inst) id(i int, what string) (uint32, error) {
	v := in.word(i)
	if v == 0 || v >= in.bound {
		return 0, in.errorf("%s id %d is out of range (bound %d)", what, v, in.bound)
	}
	return v, nil
}

// str decodes the literal string that starts at word i and returns it and
// the index of the word after it. Whatever the module's byte order, the
// first character is the lowest-order byte of the word's value.
func (in *inst) str(i int, what string) (string, int, error) {
	var s []byte
	for j := i; j < in.words(); j++ {
		w := in.word(j)
		for k := 0; k < 4; k++ {
			c := byte(w >> (8 * k))
			if c == 0 {
				if !utf8.Valid(s) {
					return "", 0, in.errorf("%s %q is not valid UTF-8", what, s)
				}
				return string(s), j + 1, nil
			}
			s = append(s, c)
		}
	}
	return "", 0, in.errorf("%s is not nul-terminated within the instruction", what)
}

// entryPoint decodes OpEntryPoint: execution model, function id, name,
// interface ids.
func (in *inst) entryPoint() (EntryPoint, error) {
	if err := in.need(4, "execution model, function and name"); err != nil {
		return EntryPoint{}, err
	}
	fn, err := in.id(2, "function")
	if err != nil {
		return EntryPoint{}, err
	}
	name, _, err := in.str(3, "name")
	if err != nil {
		return EntryPoint{}, err
	}
	return EntryPoint{ExecutionModel: ExecutionModel(in.word(1)), Function: fn, Name: name}, nil
}

// linkage decodes OpDecorate target LinkageAttributes name type; ok is
// false for other decorations.
func (in *inst) linkage() (Linkage, bool, error) {
	if err := in.need(3, "target and decoration"); err != nil {
		return Linkage{}, false, err
	}
	if in.word(2) != DecorationLinkageAttributes {
		return Linkage{}, false, nil
	}
	in.name = "OpDecorate LinkageAttributes"
	target, err := in.id(1, "target")
	if err != nil {
		return Linkage{}, false, err
	}
	name, next, err := in.str(3, "linkage name")
	if err != nil {
		return Linkage{}, false, err
	}
	if next != in.words()-1 {
		return Linkage{}, false, in.errorf("has %d words after the linkage name %q, want 1 (the linkage type)", in.words()-next, name)
	}
	return Linkage{Target: target, Name: name, Type: LinkageType(in.word(next))}, true, nil
}
