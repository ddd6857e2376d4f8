package actions

import (
	"errors"
	"fmt"
	"strings"
)

// needsEscape reports whether arg contains a byte clang escapes or that
// forces quoting in -v output: space, '"', '\\' or '$'.
func needsEscape(arg string) bool {
	return strings.ContainsAny(arg, " \"\\$")
}

// QuoteHash quotes arg as clang's -### does (llvm::sys::printArg with
// Quote=true): always double-quoted, with a backslash before '"', '\\' and
// '$'. Tabs and newlines are not escaped.
func QuoteHash(arg string) string {
	var b strings.Builder
	b.Grow(len(arg) + 2)
	b.WriteByte('"')
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if c == '"' || c == '\\' || c == '$' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// QuoteVerbose quotes arg as clang's -v does (llvm::sys::printArg with
// Quote=false): unchanged unless it contains a space, '"', '\\' or '$', in
// which case it is quoted like QuoteHash. The empty string stays empty.
func QuoteVerbose(arg string) string {
	if !needsEscape(arg) {
		return arg
	}
	return QuoteHash(arg)
}

// FormatHash formats a job line as clang -### prints it: a leading space,
// then every argument QuoteHash-quoted, separated by single spaces.
func FormatHash(args []string) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(QuoteHash(a))
	}
	return b.String()
}

// FormatVerbose formats a job line as clang -v prints it: a leading space,
// the executable always quoted, the other arguments QuoteVerbose-quoted, all
// separated by single spaces.
func FormatVerbose(args []string) string {
	var b strings.Builder
	for i, a := range args {
		b.WriteByte(' ')
		if i == 0 {
			b.WriteString(QuoteHash(a))
		} else {
			b.WriteString(QuoteVerbose(a))
		}
	}
	return b.String()
}

// ErrSyntax is wrapped by the errors SplitHash returns.
var ErrSyntax = errors.New("malformed -### line")

// SplitHash is the inverse of FormatHash: it splits a clang -### job line
// into its arguments. The line must be a sequence of "..." tokens separated
// by blanks (spaces, tabs, CR or LF); inside a token a backslash escapes the
// next byte. Unquoted text, a missing closing quote, a dangling backslash or
// a token not followed by a blank are errors (so is the " (in-process)"
// marker line, which is not a job line). An empty or blank line yields no
// arguments.
func SplitHash(line string) ([]string, error) {
	var args []string
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i == len(line) {
			return args, nil
		}
		if line[i] != '"' {
			return nil, fmt.Errorf("actions: %w: unquoted text at byte %d", ErrSyntax, i)
		}
		start := i
		i++
		var b strings.Builder
		closed := false
		for i < len(line) {
			c := line[i]
			if c == '\\' {
				if i+1 == len(line) {
					return nil, fmt.Errorf("actions: %w: dangling backslash at byte %d", ErrSyntax, i)
				}
				b.WriteByte(line[i+1])
				i += 2
				continue
			}
			i++
			if c == '"' {
				closed = true
				break
			}
			b.WriteByte(c)
		}
		if !closed {
			return nil, fmt.Errorf("actions: %w: unterminated quote starting at byte %d", ErrSyntax, start)
		}
		if i < len(line) && !isBlank(line[i]) {
			return nil, fmt.Errorf("actions: %w: no blank after token at byte %d", ErrSyntax, i)
		}
		args = append(args, b.String())
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
