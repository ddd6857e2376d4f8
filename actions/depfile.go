package actions

import (
	"fmt"
	"os"
	"strings"
)

// ReadDepFile reads a Makefile-style dependency file as clang writes it
// (-dependency-file) and returns every prerequisite it lists, once each, in
// order. Targets are not returned.
func ReadDepFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read dependency file: %v", err)
	}
	return ParseDepFile(string(data)), nil
}

// ParseDepFile parses the text of a Makefile-style dependency file. It
// undoes clang's escaping: "\ " is a space, "\#" a '#', "\\" before either
// a backslash, "$$" a '$'; a backslash at the end of a line continues it.
func ParseDepFile(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var deps []string
	seen := map[string]bool{}
	var tok strings.Builder
	inTok := false
	afterColon := false
	lineStart := true
	emit := func() {
		if !inTok {
			return
		}
		s := tok.String()
		tok.Reset()
		inTok = false
		if afterColon && !seen[s] {
			seen[s] = true
			deps = append(deps, s)
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\' && i+1 < len(text) && text[i+1] == '\n':
			emit()
			i++ // continuation
		case c == '\\' && i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '#' || text[i+1] == '\\'):
			tok.WriteByte(text[i+1])
			inTok = true
			i++
		case c == '$' && i+1 < len(text) && text[i+1] == '$':
			tok.WriteByte('$')
			inTok = true
			i++
		case c == '\n':
			emit()
			afterColon = false
			lineStart = true
			continue
		case c == ' ' || c == '\t':
			emit()
		case c == ':' && !afterColon && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t' || text[i+1] == '\n' || text[i+1] == '\\' || text[i+1] == '\r'):
			emit()
			afterColon = true
		case c == '#' && lineStart && !inTok:
			// A comment line.
			for i < len(text) && text[i] != '\n' {
				i++
			}
			i--
		default:
			tok.WriteByte(c)
			inTok = true
		}
		lineStart = false
	}
	emit()
	return deps
}
