// Package ompinfo digests what an OpenMP device compile reads from its host
// IR.
//
// In an OpenMP offload compile, each device compile (clang -cc1
// -fopenmp-is-target-device) reads the host front end's bitcode through
// -fopenmp-host-ir-file-path. Clang 22 uses that file only through
// OpenMPIRBuilder::loadOffloadInfoMetadata, which reads the module's
// !omp_offload.info named metadata: one node per target region (kind 0:
// device ID, file ID, parent function, line, count, order) and per declare
// target global or indirect function (kind 1: name, flags, order). Nothing
// else in the file (functions, globals, module flags, other metadata, its
// path) reaches the device output, so a build cache can key a device
// compile by Digest of the host IR instead of the host IR's bytes, and a
// change to host-only code no longer invalidates every device compile.
//
// The digest is of a canonical text of that metadata in which every
// reference to a numbered node (!12) is replaced by the node's own
// canonical content, recursively: node numbers depend on the rest of the
// module and do not reach the digest. The entries keep the order the host
// IR lists them in. A module without !omp_offload.info has the digest of
// an empty list, as does one whose list is empty: a device compile treats
// the two alike.
//
// The target region entries hold the device and inode numbers of the file
// each region is in (clang's getTargetEntryUniqueInfo), and the device
// compile recomputes them from the file it reads: a source file saved by
// rename is a different file to clang even with the same contents, and a
// device compile given host IR made before the rename drops that file's
// kernels or fails. The digest changes with those numbers, so a device
// compile keyed by it is consistent with the host IR it is given; a host
// IR reused from a cache keyed by contents alone may not be consistent
// with the source file as it now is.
package ompinfo

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/offcc/offcc/actions"
)

// NamedNode is the named metadata that a device compile reads from the host
// IR.
const NamedNode = "omp_offload.info"

// Version is the first line of the canonical text that Digest hashes. It
// changes whenever the canonical form does, so that digests made by
// different versions of this package never compare equal.
const Version = "offcc-ompinfo-v1"

// Limits on the metadata the canonicaliser accepts; omp_offload.info is
// flat (one level of nodes below the list), so real host IR is far below
// them.
const (
	maxDepth     = 1000     // nesting of node references
	maxCanonical = 64 << 20 // bytes of canonical text
)

// disArgs returns the arguments with which Digest runs llvm-dis on
// bitcode. --materialize-metadata makes llvm-dis load the module lazily and
// materialise only its module-level metadata: function bodies, and the
// metadata only they use, are left out, which makes it about three times
// as fast on host IR (37 ms to 12 ms for 120 target regions) and does not
// change the digest (named metadata and the nodes they reach are
// module-level).
func disArgs(bitcode string) []string {
	return []string{"--materialize-metadata", "-o", "-", bitcode}
}

// Digest returns the hex SHA-256 of the canonical text of the
// !omp_offload.info metadata in the LLVM bitcode file bitcode, which it
// disassembles with llvmDis (llvm-dis, with disArgs). An error from
// llvm-dis carries the tool's stderr; on any error the caller should key
// the device compile by the whole file instead.
func Digest(ctx context.Context, llvmDis string, bitcode string) (string, error) {
	arg := bitcode
	if strings.HasPrefix(arg, "-") {
		arg = "./" + arg // not an option, nor stdin
	}
	// Through a Shell, as every child of offcc's: in its own process
	// group, killed when ctx is done. Quiet: a cache key's query, not a
	// step of the build that -v lists.
	sh := actions.NewShell(actions.ShellOptions{})
	var stderr bytes.Buffer
	stdout, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := sh.Run(ctx, &actions.Cmd{Argv: append([]string{llvmDis}, disArgs(arg)...), Stdout: pw, Stderr: &stderr, Quiet: true})
		pw.Close() // Run returns once llvm-dis's output is all written
		done <- err
	}()
	md, rerr := collect(stdout)
	if rerr != nil {
		// Let llvm-dis finish (or fail on a closed pipe) rather than block.
		_, _ = io.Copy(io.Discard, stdout)
	}
	werr := <-done
	if werr != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("ompinfo: %s %s: %w: %s", llvmDis, bitcode, werr, msg)
		}
		return "", fmt.Errorf("ompinfo: %s %s: %w", llvmDis, bitcode, werr)
	}
	if rerr != nil {
		return "", fmt.Errorf("ompinfo: reading %s output for %s: %w", llvmDis, bitcode, rerr)
	}
	sum, err := md.digest()
	if err != nil {
		return "", fmt.Errorf("ompinfo: %s: %w", bitcode, err)
	}
	return sum, nil
}

// DigestText returns the digest that Digest returns for a module, given the
// module's textual IR as llvm-dis prints it.
func DigestText(r io.Reader) (string, error) {
	md, err := collect(r)
	if err != nil {
		return "", fmt.Errorf("ompinfo: %w", err)
	}
	sum, err := md.digest()
	if err != nil {
		return "", fmt.Errorf("ompinfo: %w", err)
	}
	return sum, nil
}

// Canonical returns the canonical text that DigestText hashes, for
// diagnostics (why did two host IR files get different digests?).
func Canonical(r io.Reader) (string, error) {
	md, err := collect(r)
	if err != nil {
		return "", fmt.Errorf("ompinfo: %w", err)
	}
	text, err := md.canonical()
	if err != nil {
		return "", fmt.Errorf("ompinfo: %w", err)
	}
	return text, nil
}

// metadata holds the top-level metadata lines of a module's text: the
// named node's operand list and every numbered node's definition, both
// unparsed. Lines that do not start with '!' (functions, globals,
// attributes, comments) are skipped while reading.
type metadata struct {
	named      string         // text after "!omp_offload.info = "
	hasNamed   bool           // a !omp_offload.info line was seen
	dupNamed   bool           // more than one was seen
	nodes      map[int]string // node number -> text after "!N = "
	dupNode    int            // a node defined twice, or -1
	badNodeDef string         // first "!<digit>..." line of another form
}

// collect reads llvm-dis text and keeps the metadata lines it needs. It
// fails only when r does; malformed lines are reported by digest, and only
// if it needs them.
func collect(r io.Reader) (*metadata, error) {
	md := &metadata{nodes: make(map[int]string), dupNode: -1}
	br := bufio.NewReaderSize(r, 256<<10)
	prefix := "!" + NamedNode
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 || err == bufio.ErrBufferFull {
			// A line is kept only if it starts with '!'; the rest of a long
			// line that does not is skipped chunk by chunk.
			if len(line) == 0 && (len(chunk) == 0 || chunk[0] != '!') {
				for err == bufio.ErrBufferFull {
					chunk, err = br.ReadSlice('\n')
				}
			} else {
				line = append(line, chunk...)
				if err == bufio.ErrBufferFull {
					continue
				}
				md.add(string(bytes.TrimRight(line, "\r\n")), prefix)
				line = line[:0]
			}
		}
		if err == io.EOF {
			return md, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// add records one line that starts with '!'.
func (md *metadata) add(line, prefix string) {
	if rest, ok := strings.CutPrefix(line, prefix); ok {
		if rhs, ok := strings.CutPrefix(strings.TrimLeft(rest, " "), "="); ok {
			if md.hasNamed {
				md.dupNamed = true
			}
			md.hasNamed = true
			md.named = strings.TrimSpace(rhs)
			return
		}
		// Another named node whose name merely starts with ours.
	}
	if len(line) < 2 || line[1] < '0' || line[1] > '9' {
		return // another named node
	}
	i := 1
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(line[1:i])
	rhs, ok := strings.CutPrefix(line[i:], " = ")
	if err != nil || !ok {
		if md.badNodeDef == "" {
			md.badNodeDef = line
		}
		return
	}
	if _, dup := md.nodes[n]; dup && md.dupNode < 0 {
		md.dupNode = n
	}
	md.nodes[n] = rhs
}

// digest hashes the canonical text.
func (md *metadata) digest() (string, error) {
	text, err := md.canonical()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), nil
}

// canonical builds the canonical text: Version, a newline, the named
// node's operands as a list of expanded nodes, a newline.
//
// In the text, a node is {op,op,...} (d{...} if distinct); an operand is
// an expanded node, a typed integer (i32:5), a string as llvm-dis escapes
// it (s"k1"), null, or ^k for a reference to the node k levels up the
// current path (a cycle).
func (md *metadata) canonical() (string, error) {
	if md.dupNamed {
		return "", fmt.Errorf("!%s is defined more than once", NamedNode)
	}
	if md.dupNode >= 0 {
		return "", fmt.Errorf("metadata node !%d is defined more than once", md.dupNode)
	}
	c := canon{md: md, memo: make(map[int]string), depth: make(map[int]int)}
	c.b.WriteString(Version)
	c.b.WriteString("\n[")
	if md.hasNamed {
		refs, err := parseNamed(md.named)
		if err != nil {
			return "", fmt.Errorf("!%s = %s: %w", NamedNode, md.named, err)
		}
		for i, n := range refs {
			if i > 0 {
				c.b.WriteByte(',')
			}
			if _, err := c.node(n); err != nil {
				return "", err
			}
		}
	}
	c.b.WriteString("]\n")
	return c.b.String(), nil
}

// parseNamed parses a named node's operand list, !{!0, !1}, into node
// numbers.
func parseNamed(s string) ([]int, error) {
	body, ok := strings.CutPrefix(s, "!{")
	if !ok {
		return nil, errors.New("want !{...}")
	}
	body, ok = strings.CutSuffix(body, "}")
	if !ok {
		return nil, errors.New("want !{...}")
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return nil, nil
	}
	var refs []int
	for _, f := range strings.Split(body, ",") {
		f = strings.TrimSpace(f)
		n, ok := nodeRef(f)
		if !ok {
			return nil, fmt.Errorf("operand %q is not a node reference", f)
		}
		refs = append(refs, n)
	}
	return refs, nil
}

// nodeRef parses "!N".
func nodeRef(s string) (int, bool) {
	digits, ok := strings.CutPrefix(s, "!")
	if !ok || digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// canon writes the canonical text of nodes.
type canon struct {
	md    *metadata
	b     strings.Builder
	memo  map[int]string // canonical text of nodes without cycles
	depth map[int]int    // nodes on the current path -> their depth
	level int
}

// node writes node n's canonical text and reports the smallest depth that
// a back reference inside it pointed at (c.level+1 or more: none outside
// the node itself, so its text does not depend on the path and may be
// memoised).
func (c *canon) node(n int) (minRef int, err error) {
	if d, ok := c.depth[n]; ok {
		fmt.Fprintf(&c.b, "^%d", c.level-d)
		return d, nil
	}
	if text, ok := c.memo[n]; ok {
		c.b.WriteString(text)
		return c.level + 1, c.checkSize()
	}
	def, ok := c.md.nodes[n]
	if !ok {
		if c.md.badNodeDef != "" {
			return 0, fmt.Errorf("metadata node !%d is undefined (and a line has an unexpected form: %.200s)", n, c.md.badNodeDef)
		}
		return 0, fmt.Errorf("metadata node !%d is undefined", n)
	}
	if c.level >= maxDepth {
		return 0, fmt.Errorf("metadata nested more than %d deep", maxDepth)
	}
	c.level++
	c.depth[n] = c.level
	defer func() {
		delete(c.depth, n)
		c.level--
	}()
	start := c.b.Len()
	minRef = c.level + 1
	body, distinct := strings.CutPrefix(def, "distinct ")
	if distinct {
		c.b.WriteByte('d')
	}
	p := parser{s: body}
	if !p.eat("!{") {
		return 0, fmt.Errorf("!%d = %.200s: not a generic node !{...}", n, def)
	}
	c.b.WriteByte('{')
	p.spaces()
	for first := true; !p.eat("}"); first = false {
		if !first {
			if !p.eat(",") {
				return 0, fmt.Errorf("!%d = %.200s: want ',' or '}' at offset %d", n, def, p.off())
			}
			p.spaces()
			c.b.WriteByte(',')
		}
		m, isRef, err := p.operand(&c.b)
		if err != nil {
			return 0, fmt.Errorf("!%d = %.200s: %w", n, def, err)
		}
		if isRef {
			r, err := c.node(m)
			if err != nil {
				return 0, err
			}
			minRef = min(minRef, r)
		}
		p.spaces()
		if err := c.checkSize(); err != nil {
			return 0, err
		}
	}
	if strings.TrimSpace(p.rest()) != "" {
		return 0, fmt.Errorf("!%d = %.200s: unexpected text after '}'", n, def)
	}
	c.b.WriteByte('}')
	if minRef > c.level {
		c.memo[n] = c.b.String()[start:]
	}
	return minRef, nil
}

// checkSize bounds the canonical text (shared subtrees are expanded each
// time they are referenced).
func (c *canon) checkSize() error {
	if c.b.Len() > maxCanonical {
		return fmt.Errorf("canonical text of !%s exceeds %d bytes", NamedNode, maxCanonical)
	}
	return nil
}

// parser scans one node's operand list.
type parser struct {
	s string
	i int
}

func (p *parser) off() int           { return p.i }
func (p *parser) rest() string       { return p.s[p.i:] }
func (p *parser) peek(s string) bool { return strings.HasPrefix(p.s[p.i:], s) }

func (p *parser) eat(s string) bool {
	if p.peek(s) {
		p.i += len(s)
		return true
	}
	return false
}

func (p *parser) spaces() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// operand parses one operand. A node reference is returned as (n, true),
// for the caller to expand; anything else is written to b in canonical
// form. Accepted: !N, !"string", null, and iN <integer> (i1 true/false).
func (p *parser) operand(b *strings.Builder) (int, bool, error) {
	switch {
	case p.eat(`!"`):
		start := p.i
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				if p.i+2 >= len(p.s) || !isHex(p.s[p.i+1]) || !isHex(p.s[p.i+2]) {
					return 0, false, fmt.Errorf("bad escape in string at offset %d", p.i)
				}
				p.i += 2
			}
			p.i++
		}
		if p.i >= len(p.s) {
			return 0, false, errors.New("unterminated string")
		}
		b.WriteString(`s"`)
		b.WriteString(p.s[start:p.i])
		b.WriteByte('"')
		p.i++
		return 0, false, nil
	case p.peek("!") && p.i+1 < len(p.s) && isDigit(p.s[p.i+1]):
		p.i++
		start := p.i
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		n, err := strconv.Atoi(p.s[start:p.i])
		if err != nil {
			return 0, false, fmt.Errorf("bad node reference: %w", err)
		}
		return n, true, nil
	case p.eat("null"):
		b.WriteString("null")
		return 0, false, nil
	case p.peek("i") && p.i+1 < len(p.s) && isDigit(p.s[p.i+1]):
		start := p.i
		p.i++
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		typ := p.s[start:p.i]
		if !p.eat(" ") {
			return 0, false, fmt.Errorf("want a value after %s", typ)
		}
		vstart := p.i
		for p.i < len(p.s) && p.s[p.i] != ',' && p.s[p.i] != '}' && p.s[p.i] != ' ' {
			p.i++
		}
		val := p.s[vstart:p.i]
		if !isInteger(val) && !(typ == "i1" && (val == "true" || val == "false")) {
			return 0, false, fmt.Errorf("unsupported %s value %q", typ, val)
		}
		b.WriteString(typ)
		b.WriteByte(':')
		b.WriteString(val)
		return 0, false, nil
	}
	end := min(len(p.s), p.i+40)
	return 0, false, fmt.Errorf("unsupported operand at offset %d: %q", p.i, p.s[p.i:end])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f')
}

// isInteger reports whether s is a decimal integer, optionally negative.
func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
