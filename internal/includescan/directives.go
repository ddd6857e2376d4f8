// Directives: what a header's #include-like directives and __has_include-like
// operators name, and the macros that could alias those operators.

package includescan

import (
	"bytes"
	"fmt"
)

// headerRef is one file name a header refers to.
type headerRef struct {
	name   string
	angled bool // <name>, searched for in the system/-I directories only
	embed  bool // #embed or __has_embed: data, looked up but not scanned
}

// directives is what the scanner reads from a file.
type directives struct {
	refs []headerRef // file names its directives and operators name
	bad  string      // why the file defeats the scan ("LINE: what"); "" if nothing does
	// defs are its object-like macros whose body is one identifier (NAME,
	// IDENT), which may make NAME an alias of __has_include.
	defs  [][2]string
	opDef bool // one of defs defines an alias of an operator itself
	// uses are the identifiers of its directives with how they are used
	// (use* bits), but for those defined tests, #ifdef and the like
	// test and #define defines; calls are those followed by ( and a
	// header name. Both matter only for the identifiers that turn out to
	// be aliases of the operators.
	uses  map[string]identUse
	calls []opCall
}

// identUse says how an identifier is used in a file's directives.
type identUse struct {
	how  uint8 // use* bits
	line int   // the first line with a use other than a call with a header name
}

// How an identifier is used in directives.
const (
	useCall     = 1 << iota // NAME ( "name" or NAME ( <name>
	useComputed             // NAME ( anything else
	useBare                 // NAME not followed by (
)

// opCall is NAME ( header-name in a directive.
type opCall struct {
	name string
	ref  headerRef
}

// operators are the operators that look files up, with the kinds of
// reference they make (kind* bits).
var operators = map[string]uint8{"__has_include": kindInclude, "__has_include_next": kindInclude, "__has_embed": kindEmbed}

// Kinds of reference an operator (or its alias) makes.
const (
	kindInclude = 1 << iota
	kindEmbed
)

// parseDirectives returns what a header's text refers to: the file names of its
// #include, #include_next, #import, #__include_macros, #embed and #pragma
// GCC dependency directives and of its __has_include, __has_include_next
// and __has_embed operators, wherever they are (in #if 0 blocks too), and
// what could make another identifier such an operator (see directives).
// Its bad says why the text defeats the scan: a computed include (a macro
// where a header name should be), an operator used other than as NAME(,
// as the body of a #define NAME, or after defined, #ifdef and the like,
// an unparsable header name.
func parseDirectives(b []byte) *directives {
	return parseDirectivesWith(b, true)
}

// parseDirectivesWith is parseDirectives, which skips the lines that are not
// directives with lexer.skipText when fast is set, and lexes them
// token by token otherwise (to check the one against the other).
func parseDirectivesWith(b []byte, fast bool) *directives {
	p := &directives{}
	l := &lexer{b: b}
	bol := true       // at the start of a line
	dir := ""         // the directive of the current line
	dirToks := 0      // tokens after the directive's name
	funcLike := false // the #define of the line defines a function-like macro
	var prev, prev2 token
	lines := &lineCounter{b: b}
	fail := func(pos int, format string, args ...any) *directives {
		p.bad = fmt.Sprintf("%d: %s", lines.line(pos), fmt.Sprintf(format, args...))
		return p
	}
	// oneIdentBody reports whether the identifier just lexed is the whole
	// body of an object-like #define.
	oneIdentBody := func() bool {
		if dir != "define" || dirToks != 1 || funcLike || prev.kind != tokIdent {
			return false
		}
		save := l.i
		l.skipBlanks()
		c, _ := l.at(l.i)
		l.i = save
		return c < 0 || c == '\n' || c == '\r'
	}
	for {
		var t token
		if bol || dir != "" || !fast || !l.skipText() {
			t = l.next()
		} else {
			t = l.ident(l.i) // an identifier starting __has_
		}
		switch t.kind {
		case tokEOF:
			return p
		case tokNewline:
			bol, dir, dirToks, funcLike, prev, prev2 = true, "", 0, false, token{}, token{}
			continue
		}
		if t.kind == tokHash && bol {
			bol = false
			save := l.i
			kw := l.next()
			if kw.kind != tokIdent {
				l.i = save // a null directive, a line marker
				continue
			}
			dir, dirToks, prev, prev2 = string(kw.raw), 0, token{}, token{}
			switch dir {
			case "include", "include_next", "import", "__include_macros", "embed":
				r, why := l.headerName()
				if why != "" {
					return fail(kw.pos, "#%s %s", dir, why)
				}
				r.embed = dir == "embed"
				p.refs = append(p.refs, r)
			case "pragma":
				save := l.i
				ns := l.next()
				if ns.is("GCC") || ns.is("clang") {
					if d := l.next(); d.is("dependency") {
						r, why := l.headerName()
						if why != "" {
							return fail(kw.pos, "#pragma %s dependency %s", ns.raw, why)
						}
						p.refs = append(p.refs, r)
						continue
					}
				}
				l.i = save
			}
			continue
		}
		bol = false
		if t.kind == tokIdent && (dir != "" || operators[string(t.raw)] != 0) {
			_, op := operators[string(t.raw)]
			defined := dir != "" && (prev.is("defined") || prev.kind == tokLParen && prev2.is("defined"))
			tested := dirToks == 0 && (dir == "ifdef" || dir == "ifndef" || dir == "elifdef" || dir == "elifndef" || dir == "undef")
			switch {
			case dir == "define" && dirToks == 0:
				// The macro being defined.
				if c, _ := l.at(l.i); c == '(' {
					funcLike = true
				}
			case t.is("defined") || defined || tested:
			case oneIdentBody():
				p.defs = append(p.defs, [2]string{string(prev.raw), string(t.raw)})
				p.opDef = p.opDef || op
			case op:
				l.skipBlanks()
				c, j := l.at(l.i)
				if c != '(' {
					return fail(t.pos, "%s without ( (used through a macro?)", t.raw)
				}
				l.i = j + 1
				r, why := l.headerName()
				if why != "" {
					return fail(t.pos, "%s %s", t.raw, why)
				}
				r.embed = t.is("__has_embed")
				p.refs = append(p.refs, r)
			default:
				p.use(l, t, lines)
			}
		}
		if dir != "" {
			dirToks++
		}
		prev2, prev = prev, t
	}
}

// use records how the identifier t of a directive is used, looking ahead
// without moving l.
func (p *directives) use(l *lexer, t token, lines *lineCounter) {
	save := l.i
	how := uint8(useBare)
	l.skipBlanks()
	if c, j := l.at(l.i); c == '(' {
		l.i = j + 1
		how = useComputed
		l.skipBlanks()
		if c, _ := l.at(l.i); c == '"' || c == '<' {
			if r, why := l.headerName(); why == "" {
				how = useCall
				p.calls = append(p.calls, opCall{string(t.raw), r})
			}
		}
	}
	l.i = save
	if p.uses == nil {
		p.uses = map[string]identUse{}
	}
	u, ok := p.uses[string(t.raw)]
	nu := u
	nu.how |= how
	if how != useCall && u.how&^useCall == 0 {
		nu.line = lines.line(t.pos)
	}
	if !ok || nu != u {
		p.uses[string(t.raw)] = nu
	}
}

// lineCounter turns positions of b into line numbers, counting on from the
// last position asked about.
type lineCounter struct {
	b      []byte
	pos, n int // a position and its line
}

// line returns the 1-based line of position pos.
func (c *lineCounter) line(pos int) int {
	pos = min(pos, len(c.b))
	if pos < c.pos || c.n == 0 {
		c.pos, c.n = 0, 1
	}
	c.n += bytes.Count(c.b[c.pos:pos], []byte{'\n'})
	c.pos = pos
	return c.n
}
