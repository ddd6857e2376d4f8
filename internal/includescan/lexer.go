// Lexing: the few preprocessing tokens the directive parser needs.

package includescan

import (
	"bytes"
	"fmt"
)

// Token kinds of lexer.
const (
	tokEOF = iota
	tokNewline
	tokIdent
	tokHash // # or %: (## and %:%: are tokOther)
	tokLParen
	tokString // a string or character literal, raw strings included
	tokOther
)

// token is a token: its kind, its spelling (identifiers only, splices
// removed) and where it starts.
type token struct {
	kind int
	raw  []byte
	pos  int
}

// is reports whether t is the identifier s.
func (t token) is(s string) bool { return t.kind == tokIdent && string(t.raw) == s }

// lexer splits a C-family source file into the few tokens the
// directive parser needs, translation phases 1-3 style: line splices
// (a backslash, optional blanks, a newline) vanish, comments are blanks,
// string and character literals (raw ones too) are single tokens.
type lexer struct {
	b []byte
	i int
}

// sk returns j moved past any line splices.
func (l *lexer) sk(j int) int {
	for j < len(l.b) && l.b[j] == '\\' {
		k := j + 1
		for k < len(l.b) && (l.b[k] == ' ' || l.b[k] == '\t') {
			k++
		}
		switch {
		case k < len(l.b) && l.b[k] == '\n':
			j = k + 1
		case k < len(l.b) && l.b[k] == '\r':
			k++
			if k < len(l.b) && l.b[k] == '\n' {
				k++
			}
			j = k
		default:
			return j
		}
	}
	return j
}

// at returns the byte at j after any splices (-1 at the end) and its
// position.
func (l *lexer) at(j int) (int, int) {
	if j < len(l.b) && l.b[j] != '\\' {
		return int(l.b[j]), j
	}
	j = l.sk(j)
	if j >= len(l.b) {
		return -1, len(l.b)
	}
	return int(l.b[j]), j
}

// identChars are the bytes identifiers are made of.
var identChars = func() (t [256]bool) {
	for c := range t {
		t[c] = identChar(c)
	}
	return t
}()

// identStart reports whether byte c (-1 at the end) may start an
// identifier (any non-ASCII byte may: UTF-8 identifiers).
func identStart(c int) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

// identChar reports whether byte c may continue an identifier.
func identChar(c int) bool {
	return identStart(c) || c >= '0' && c <= '9'
}

// lineCommentEnd returns the position of the newline that ends the //
// comment whose text starts at j (a splice continues it).
func (l *lexer) lineCommentEnd(j int) int {
	for k := j; k < len(l.b); k++ {
		c := l.b[k]
		if c != '\n' && c != '\r' {
			continue
		}
		if c == '\r' && k+1 < len(l.b) && l.b[k+1] == '\n' {
			continue // the \n ends it
		}
		m := k - 1
		if c == '\n' && m >= j && l.b[m] == '\r' {
			m--
		}
		for m >= j && (l.b[m] == ' ' || l.b[m] == '\t') {
			m--
		}
		if m >= j && l.b[m] == '\\' {
			continue // spliced
		}
		if c == '\n' && k > 0 && l.b[k-1] == '\r' {
			return k - 1
		}
		return k
	}
	return len(l.b)
}

// blockCommentEnd returns the position after the */ that ends the block
// comment whose text starts at j (the end of the file if none does).
func (l *lexer) blockCommentEnd(j int) int {
	for j < len(l.b) {
		k := bytes.IndexByte(l.b[j:], '*')
		if k < 0 {
			return len(l.b)
		}
		k += j
		if c, m := l.at(k + 1); c == '/' {
			return m + 1
		}
		j = k + 1
	}
	return len(l.b)
}

// quoteEnd returns the position after the literal whose text starts at j
// and is closed by q; an unterminated one ends before its line's end.
func (l *lexer) quoteEnd(j int, q byte) int {
	for {
		c, k := l.at(j)
		switch {
		case c < 0 || c == '\n' || c == '\r':
			return k
		case c == '\\':
			c2, k2 := l.at(k + 1)
			if c2 < 0 || c2 == '\n' || c2 == '\r' {
				return k2
			}
			j = k2 + 1
		case c == int(q):
			return k + 1
		default:
			j = k + 1
		}
	}
}

// rawEnd returns the position after the raw string literal whose text
// (after R") starts at j.
func (l *lexer) rawEnd(j int) int {
	k := j
	for k < len(l.b) && k-j <= 16 {
		c := l.b[k]
		if c == '(' {
			term := append(append([]byte{')'}, l.b[j:k]...), '"')
			if e := bytes.Index(l.b[k+1:], term); e >= 0 {
				return k + 1 + e + len(term)
			}
			return len(l.b)
		}
		if c == ')' || c == '\\' || c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\n' || c == '\r' || c == '"' {
			break
		}
		k++
	}
	return l.quoteEnd(j, '"') // not a valid raw string: lex it as an ordinary one
}

// ppNumberEnd returns the position after the pp-number starting at j.
func (l *lexer) ppNumberEnd(j int) int {
	for {
		c, k := l.at(j)
		switch {
		case c == 'e' || c == 'E' || c == 'p' || c == 'P':
			if n, m := l.at(k + 1); n == '+' || n == '-' {
				j = m + 1
			} else {
				j = k + 1
			}
		case identChar(c) || c == '.':
			j = k + 1
		case c == '\'':
			if n, _ := l.at(k + 1); identChar(n) {
				j = k + 1 // a digit separator
			} else {
				return k
			}
		default:
			return k
		}
	}
}

// skipBlanks moves past blanks and comments, but not past a newline.
func (l *lexer) skipBlanks() {
	for {
		c, j := l.at(l.i)
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == 0:
			l.i = j + 1
		case c == '/':
			n, k := l.at(j + 1)
			switch n {
			case '/':
				l.i = l.lineCommentEnd(k + 1)
			case '*':
				l.i = l.blockCommentEnd(k + 1)
			default:
				l.i = j
				return
			}
		default:
			l.i = j
			return
		}
	}
}

// next returns the next token.
func (l *lexer) next() token {
	for {
		l.skipBlanks()
		c, j := l.at(l.i)
		t := token{pos: j}
		switch {
		case c < 0:
			l.i = j
			t.kind = tokEOF
		case c == '\n':
			l.i = j + 1
			t.kind = tokNewline
		case c == '\r':
			l.i = j + 1
			if l.i < len(l.b) && l.b[l.i] == '\n' {
				l.i++
			}
			t.kind = tokNewline
		case c == '"' || c == '\'':
			l.i = l.quoteEnd(j+1, byte(c))
			t.kind = tokString
		case c == '#':
			t.kind = tokHash
			l.i = j + 1
			if n, k := l.at(j + 1); n == '#' {
				l.i, t.kind = k+1, tokOther
			}
		case c == '%':
			t.kind = tokOther
			l.i = j + 1
			if n, k := l.at(j + 1); n == ':' {
				l.i, t.kind = k+1, tokHash
				if n2, k2 := l.at(k + 1); n2 == '%' {
					if n3, k3 := l.at(k2 + 1); n3 == ':' {
						l.i, t.kind = k3+1, tokOther
					}
				}
			}
		case c == '(':
			l.i = j + 1
			t.kind = tokLParen
		case c >= '0' && c <= '9':
			l.i = l.ppNumberEnd(j)
			t.kind = tokOther
		case c == '.':
			if n, _ := l.at(j + 1); n >= '0' && n <= '9' {
				l.i = l.ppNumberEnd(j)
			} else {
				l.i = j + 1
			}
			t.kind = tokOther
		case identStart(c):
			return l.ident(j)
		default:
			l.i = j + 1
			t.kind = tokOther
		}
		return t
	}
}

// ident lexes the identifier at j, or the string literal it prefixes.
func (l *lexer) ident(j int) token {
	start := j
	for j < len(l.b) && identChars[l.b[j]] {
		j++
	}
	var spliced []byte // the spelling, when a splice interrupts it
	for {
		c, k := l.at(j)
		if k != j && spliced == nil {
			spliced = append([]byte(nil), l.b[start:j]...)
		}
		if !identChar(c) {
			j = k
			break
		}
		if spliced != nil {
			spliced = append(spliced, byte(c))
		}
		j = k + 1
	}
	t := token{kind: tokIdent, raw: spliced, pos: start}
	if spliced == nil {
		t.raw = l.b[start:j]
	}
	l.i = j
	if c, k := l.at(j); c == '"' || c == '\'' {
		switch string(t.raw) {
		case "L", "u", "U", "u8":
			l.i, t.kind, t.raw = l.quoteEnd(k+1, byte(c)), tokString, nil
		case "R", "LR", "uR", "UR", "u8R":
			if c == '"' {
				l.i, t.kind, t.raw = l.rawEnd(k+1), tokString, nil
			}
		}
	}
	return t
}

// skipText moves past the tokens of a line that is not a directive, up
// to its newline; it stops early, and returns true, at an identifier that
// may be one of the __has_ operators. It is next without the tokens.
func (l *lexer) skipText() bool {
	b := l.b
	i := l.i
	for i < len(b) {
		c := b[i]
		switch {
		case c == '\n' || c == '\r':
			l.i = i
			return false
		case c == '\\':
			if j := l.sk(i); j != i {
				i = j
			} else {
				i++
			}
		case c >= '0' && c <= '9':
			i = l.ppNumberEnd(i)
		case identChars[c]:
			j := i
			for j < len(b) && identChars[b[j]] {
				j++
			}
			if j-i >= 6 && string(b[i:i+6]) == "__has_" || j < len(b) && (b[j] == '"' || b[j] == '\'' || b[j] == '\\') {
				// An operator, a string literal's prefix, or an identifier
				// a splice may continue.
				save := l.i
				t := l.ident(i)
				if t.kind == tokIdent && bytes.HasPrefix(t.raw, []byte("__has_")) {
					l.i = i
					return true
				}
				i, l.i = l.i, save
				continue
			}
			i = j
		case c == '"' || c == '\'':
			i = l.quoteEnd(i+1, c)
		case c == '/':
			n, k := l.at(i + 1)
			switch n {
			case '/':
				i = l.lineCommentEnd(k + 1)
			case '*':
				i = l.blockCommentEnd(k + 1)
			default:
				i++
			}
		default:
			i++
		}
	}
	l.i = i
	return false
}

// headerName reads a header name starting at l.i (after blanks): "name"
// or <name>, read raw up to the closing character on the same line. why
// is set when there is none: a macro (a computed include) or anything
// else.
func (l *lexer) headerName() (r headerRef, why string) {
	l.skipBlanks()
	c, j := l.at(l.i)
	var end int
	switch {
	case c == '"':
		end = '"'
	case c == '<':
		end, r.angled = '>', true
	case identStart(c):
		t := l.ident(j)
		if t.kind == tokIdent {
			return r, fmt.Sprintf("computed (%s is a macro)", t.raw)
		}
		return r, "has a prefixed string literal, not a header name"
	default:
		return r, "has no header name"
	}
	var name []byte
	for k := j + 1; ; {
		c, m := l.at(k)
		if c < 0 || c == '\n' || c == '\r' {
			return r, "has an unterminated header name"
		}
		if c == end {
			l.i = m + 1
			break
		}
		name = append(name, byte(c))
		k = m + 1
	}
	r.name = string(name)
	return r, ""
}
