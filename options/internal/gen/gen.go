// Package gen reads clang's generated option table (Options.inc, installed
// by Debian's libclang-22-dev as clang/Options/Options.inc, and by
// libclang-19-dev as clang/Driver/Options.inc) into options.Records and
// writes them as Go source. offcc's committed tables are its output (see
// ../genoptions); the options package's tests run it again on the
// installed files and compare.
package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/offcc/offcc/options"
)

// Origin is where Debian's libclang-22-dev installs clang's option table.
const Origin = "/usr/lib/llvm-22/include/clang/Options/Options.inc"

// Origin19 is where Debian's libclang-19-dev installs clang 19's option
// table (clang moved it from clang/Driver to clang/Options in LLVM 21).
const Origin19 = "/usr/lib/llvm-19/include/clang/Driver/Options.inc"

// Parse reads either of the two layouts TableGen's option emitter has
// written: LLVM 20 and later name each option's prefixes and spelling by
// offsets into a string table (OptionStrTableStorage, OptionPrefixesTable,
// and a SUBCOMMANDIDS field: 15 fields); LLVM 19 and earlier declare
// PREFIX(prefix_N, {...}) arrays, each ending in an empty sentinel, and
// spell the prefixed name as a string literal (14 fields). The fields up
// to METAVAR, the ones read, are the same in both.

// Parse returns the OPTION records of an Options.inc file, in its order
// (which is llvm::opt::OptTable's search order), groups included.
func Parse(inc []byte) ([]options.Record, error) {
	text := string(inc)
	var fieldsOf func(f []string) (prefixes []string, spelled string, err error)
	if strings.Contains(text, "\n#ifdef PREFIX\n") && !strings.Contains(text, "OptionStrTableStorage[]") {
		prefixes, err := prefixMacros(text)
		if err != nil {
			return nil, err
		}
		fieldsOf = func(f []string) ([]string, string, error) {
			var set []string
			if f[0] != "llvm::ArrayRef<llvm::StringLiteral>()" {
				var ok bool
				if set, ok = prefixes[f[0]]; !ok {
					return nil, "", fmt.Errorf("no prefix set %s", f[0])
				}
			}
			name, err := unquoteConcat(f[1])
			if err != nil {
				return nil, "", fmt.Errorf("name %s: %v", f[1], err)
			}
			return set, name, nil
		}
	} else {
		strs, err := stringTable(text)
		if err != nil {
			return nil, err
		}
		prefixes, err := prefixTable(text, strs)
		if err != nil {
			return nil, err
		}
		fieldsOf = func(f []string) ([]string, string, error) {
			pi, err := strconv.Atoi(f[0])
			if err != nil {
				return nil, "", fmt.Errorf("prefixes %q", f[0])
			}
			set, ok := prefixes[pi]
			if !ok {
				return nil, "", fmt.Errorf("no prefix set %d", pi)
			}
			ni, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, "", fmt.Errorf("name %q", f[1])
			}
			spelled, ok := strs[ni]
			if !ok {
				return nil, "", fmt.Errorf("no string at %d", ni)
			}
			return set, spelled, nil
		}
	}
	start := strings.Index(text, "\n#ifdef OPTION\n")
	end := strings.Index(text, "\n#endif // OPTION\n")
	if start < 0 || end < start {
		return nil, fmt.Errorf("no #ifdef OPTION section")
	}
	body := text[start:end]
	var recs []options.Record
	for {
		i := strings.Index(body, "\nOPTION(")
		if i < 0 {
			break
		}
		fields, rest, err := splitCall(body[i+len("\nOPTION("):])
		if err != nil {
			return nil, fmt.Errorf("record %d: %v", len(recs)+1, err)
		}
		body = rest
		r, err := record(fields, fieldsOf)
		if err != nil {
			return nil, fmt.Errorf("record %d (%s): %v", len(recs)+1, strings.Join(fields[:min(3, len(fields))], ", "), err)
		}
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("no OPTION records")
	}
	return recs, nil
}

// stringTable returns the string table: offset to string.
func stringTable(text string) (map[int]string, error) {
	start := strings.Index(text, "OptionStrTableStorage[] =")
	if start < 0 {
		return nil, fmt.Errorf("no OptionStrTableStorage")
	}
	end := strings.Index(text[start:], ";\n")
	if end < 0 {
		return nil, fmt.Errorf("OptionStrTableStorage does not end")
	}
	var storage strings.Builder
	for _, line := range strings.Split(text[start:start+end], "\n")[1:] {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "\"") {
			continue
		}
		s, err := cUnquote(line)
		if err != nil {
			return nil, fmt.Errorf("string table line %s: %v", line, err)
		}
		storage.WriteString(s)
	}
	all := storage.String()
	strs := map[int]string{}
	for off := 0; off < len(all); {
		n := strings.IndexByte(all[off:], 0)
		if n < 0 {
			return nil, fmt.Errorf("string table: unterminated string at %d", off)
		}
		strs[off] = all[off : off+n]
		off += n + 1
	}
	return strs, nil
}

// prefixTable returns the prefix sets by their index in
// OptionPrefixesTable.
func prefixTable(text string, strs map[int]string) (map[int][]string, error) {
	start := strings.Index(text, "OptionPrefixesTable[] = {")
	if start < 0 {
		return nil, fmt.Errorf("no OptionPrefixesTable")
	}
	end := strings.Index(text[start:], "};")
	if end < 0 {
		return nil, fmt.Errorf("OptionPrefixesTable does not end")
	}
	body := text[start+len("OptionPrefixesTable[] = {") : start+end]
	var nums []int
	for _, f := range strings.Split(body, ",") {
		f = strings.TrimSpace(f)
		if i := strings.Index(f, "/*"); i >= 0 {
			f = strings.TrimSpace(f[:i])
		}
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("OptionPrefixesTable: %q", f)
		}
		nums = append(nums, n)
	}
	sets := map[int][]string{}
	for i := 0; i < len(nums); {
		count := nums[i]
		if i+1+count > len(nums) {
			return nil, fmt.Errorf("OptionPrefixesTable: a set at %d runs past the end", i)
		}
		var set []string
		for _, off := range nums[i+1 : i+1+count] {
			s, ok := strs[off]
			if !ok {
				return nil, fmt.Errorf("OptionPrefixesTable: no string at %d", off)
			}
			set = append(set, s)
		}
		sets[i] = set
		i += 1 + count
	}
	return sets, nil
}

// prefixMacros returns LLVM 19's prefix sets by name, from the PREFIX
// section: PREFIX(prefix_1, {llvm::StringLiteral("-") COMMA
// llvm::StringLiteral("")}), whose last, empty, string ends the array and
// is no prefix (the OptTable takes the array less its last element).
func prefixMacros(text string) (map[string][]string, error) {
	start := strings.Index(text, "\n#ifdef PREFIX\n")
	end := strings.Index(text, "\n#endif // PREFIX\n")
	if start < 0 || end < start {
		return nil, fmt.Errorf("no #ifdef PREFIX section")
	}
	lit := regexp.MustCompile(`llvm::StringLiteral\(("(?:[^"\\]|\\.)*")\)`)
	sets := map[string][]string{}
	for _, line := range strings.Split(text[start:end], "\n") {
		rest, ok := strings.CutPrefix(line, "PREFIX(")
		if !ok {
			continue
		}
		name, body, ok := strings.Cut(rest, ",")
		if !ok {
			return nil, fmt.Errorf("prefix line %q", line)
		}
		var set []string
		for _, m := range lit.FindAllStringSubmatch(body, -1) {
			s, err := cUnquote(m[1])
			if err != nil {
				return nil, fmt.Errorf("prefix line %q: %v", line, err)
			}
			set = append(set, s)
		}
		if len(set) == 0 || set[len(set)-1] != "" {
			return nil, fmt.Errorf("prefix set %s does not end in \"\"", name)
		}
		if set = set[:len(set)-1]; len(set) == 0 {
			set = nil // as the other layout's empty set
		}
		sets[strings.TrimSpace(name)] = set
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("no PREFIX(...) in the PREFIX section")
	}
	return sets, nil
}

// splitCall splits the arguments of a macro call whose '(' has been read,
// at top-level commas, and returns them with the text after ')'.
func splitCall(s string) (fields []string, rest string, err error) {
	depth := 0
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return nil, "", fmt.Errorf("unterminated string")
			}
			cur.WriteString(s[i : j+1])
			i = j
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return nil, "", fmt.Errorf("unterminated comment")
			}
			i += j + 3
			continue
		case c == '(' || c == '{':
			depth++
		case (c == ')' || c == '}') && depth > 0:
			depth--
		case c == ')':
			fields = append(fields, strings.TrimSpace(cur.String()))
			return fields, s[i+1:], nil
		case c == ',' && depth == 0:
			fields = append(fields, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	return nil, "", fmt.Errorf("unterminated OPTION(")
}

// record builds a Record from the fields of one OPTION(...): PREFIXES,
// NAME, ID, KIND, GROUP, ALIAS, ALIASARGS, FLAGS, VISIBILITY, PARAM,
// HELPTEXT, HELPTEXTSFORVARIANTS, METAVAR, VALUES and, from LLVM 20 on,
// SUBCOMMANDIDS. fieldsOf reads the first two, whose form depends on the
// layout: the prefix set and the spelling (first prefix and name).
func record(f []string, fieldsOf func([]string) ([]string, string, error)) (options.Record, error) {
	var r options.Record
	if len(f) != 14 && len(f) != 15 {
		return r, fmt.Errorf("%d fields, want 14 (LLVM 19) or 15 (LLVM 20 and later)", len(f))
	}
	prefixes, spelled, err := fieldsOf(f)
	if err != nil {
		return r, err
	}
	r.Prefixes = prefixes
	var ok bool
	// The string table holds the first prefix and the name.
	r.Name = spelled
	if len(r.Prefixes) > 0 {
		if r.Name, ok = strings.CutPrefix(spelled, r.Prefixes[0]); !ok {
			return r, fmt.Errorf("spelling %q lacks its prefix %q", spelled, r.Prefixes[0])
		}
	}
	r.ID = f[2]
	if r.Kind, ok = options.KindByName(f[3]); !ok {
		return r, fmt.Errorf("unknown kind %s", f[3])
	}
	if f[4] != "INVALID" {
		r.Group = f[4]
	}
	if f[5] != "INVALID" {
		r.Alias = f[5]
	}
	if f[6] != "nullptr" {
		s, err := cUnquote(f[6])
		if err != nil {
			return r, fmt.Errorf("alias arguments %s: %v", f[6], err)
		}
		r.AliasArgs = strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
	}
	for _, name := range bitList(f[7]) {
		b, ok := options.FlagByName(name)
		if !ok {
			return r, fmt.Errorf("unknown flag %s", name)
		}
		r.Flags |= b
	}
	for _, name := range bitList(f[8]) {
		b, ok := options.VisibilityByName(name)
		if !ok {
			return r, fmt.Errorf("unknown visibility %s", name)
		}
		r.Visibility |= b
	}
	if r.NumArgs, err = strconv.Atoi(f[9]); err != nil {
		return r, fmt.Errorf("param %q", f[9])
	}
	if f[12] != "nullptr" {
		s, err := unquoteConcat(f[12])
		if err != nil {
			return r, fmt.Errorf("metavar %s: %v", f[12], err)
		}
		r.MetaVar = s
	}
	return r, nil
}

// bitList splits "A | B | 0" into its names, dropping 0.
func bitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "|") {
		p = strings.TrimSpace(p)
		if p != "" && p != "0" {
			out = append(out, p)
		}
	}
	return out
}

// unquoteConcat unquotes adjacent C string literals.
func unquoteConcat(s string) (string, error) {
	var out strings.Builder
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] != '"' {
			return "", fmt.Errorf("not a string literal: %s", s)
		}
		j := 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' {
				j++
			}
		}
		if j >= len(s) {
			return "", fmt.Errorf("unterminated string literal")
		}
		u, err := cUnquote(s[:j+1])
		if err != nil {
			return "", err
		}
		out.WriteString(u)
		s = s[j+1:]
	}
	return out.String(), nil
}

// Source returns the Go source of a file of package pkg that declares
// var name = []options.Record{...} (or []Record in package options).
func Source(pkg, name, origin string, recs []options.Record) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by options/internal/genoptions from %s. DO NOT EDIT.\n\n", origin)
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	q := ""
	if pkg != "options" {
		fmt.Fprintf(&b, "import \"github.com/offcc/offcc/options\"\n\n")
		q = "options."
	}
	fmt.Fprintf(&b, "// %s are the records of clang's option table, in its order.\n", name)
	fmt.Fprintf(&b, "var %s = []%sRecord{\n", name, q)
	for _, r := range recs {
		fmt.Fprintf(&b, "\t{%s},\n", recordLiteral(q, r))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func recordLiteral(q string, r options.Record) string {
	var parts []string
	if len(r.Prefixes) > 0 {
		parts = append(parts, "Prefixes: "+stringSlice(r.Prefixes))
	}
	parts = append(parts, "Name: "+strconv.Quote(r.Name), "ID: "+strconv.Quote(r.ID), "Kind: "+q+r.Kind.String())
	if r.Group != "" {
		parts = append(parts, "Group: "+strconv.Quote(r.Group))
	}
	if r.Alias != "" {
		parts = append(parts, "Alias: "+strconv.Quote(r.Alias))
	}
	if r.AliasArgs != nil {
		parts = append(parts, "AliasArgs: "+stringSlice(r.AliasArgs))
	}
	if r.Flags != 0 {
		parts = append(parts, "Flags: "+bits(q, r.Flags.String()))
	}
	if r.Visibility != 0 {
		parts = append(parts, "Visibility: "+bits(q, r.Visibility.String()))
	}
	if r.NumArgs != 0 {
		parts = append(parts, "NumArgs: "+strconv.Itoa(r.NumArgs))
	}
	if r.MetaVar != "" {
		parts = append(parts, "MetaVar: "+strconv.Quote(r.MetaVar))
	}
	return strings.Join(parts, ", ")
}

func stringSlice(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

func bits(q, names string) string {
	parts := strings.Split(names, "|")
	for i, p := range parts {
		parts[i] = q + p
	}
	return strings.Join(parts, " | ")
}

// cUnquote unquotes one C string literal: the escapes TableGen writes
// (\\, \", \n, \t, \', octal such as \0).
func cUnquote(lit string) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", fmt.Errorf("not a string literal: %s", lit)
	}
	body := lit[1 : len(lit)-1]
	var out strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			out.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", fmt.Errorf("string literal ends in a backslash: %s", lit)
		}
		switch e := body[i]; {
		case e >= '0' && e <= '7':
			n, j := 0, i
			for ; j < len(body) && j < i+3 && body[j] >= '0' && body[j] <= '7'; j++ {
				n = n*8 + int(body[j]-'0')
			}
			out.WriteByte(byte(n))
			i = j - 1
		case e == 'n':
			out.WriteByte('\n')
		case e == 't':
			out.WriteByte('\t')
		case e == '\\' || e == '"' || e == '\'' || e == '?':
			out.WriteByte(e)
		default:
			return "", fmt.Errorf("unknown escape \\%c in %s", e, lit)
		}
	}
	return out.String(), nil
}

// IndexSource returns Go source declaring name, the lookup index of the
// records recs (declared as recsName): what the options package's
// buildIndex makes of them at run time, written out so that clang's table
// needs no maps built per process. The options package's tests check the
// two agree.
func IndexSource(pkg, name, recsName, origin string, recs []options.Record) ([]byte, error) {
	n := len(recs)
	ids := make([]int, n)
	next := make([]int, n)
	for i := range recs {
		ids[i] = i
		next[i] = -1
	}
	sort.SliceStable(ids, func(i, j int) bool { return recs[ids[i]].ID < recs[ids[j]].ID })
	lastOfID := func(id string) int {
		if id == "" {
			return -1
		}
		j := sort.Search(n, func(i int) bool { return recs[ids[i]].ID > id })
		if j == 0 || recs[ids[j-1]].ID != id {
			return -1
		}
		return ids[j-1]
	}
	isNamed := func(k options.Kind) bool { return k != options.Group && k != options.Input && k != options.Unknown }
	var named, names []int
	for i := range recs {
		if isNamed(recs[i].Kind) {
			named = append(named, i)
		}
	}
	sort.SliceStable(named, func(i, j int) bool { return recs[named[i]].Name < recs[named[j]].Name })
	for k, i := range named {
		if k > 0 && recs[named[k-1]].Name == recs[i].Name {
			next[named[k-1]] = i
			continue
		}
		names = append(names, i)
	}
	alias, group := make([]int, n), make([]int, n)
	for i := range recs {
		alias[i], group[i] = lastOfID(recs[i].Alias), lastOfID(recs[i].Group)
	}
	var prefixes []string
	vis := map[string]options.Visibility{}
	input, unknown := -1, -1
	for i := range recs {
		switch recs[i].Kind {
		case options.Input:
			input = i
		case options.Unknown:
			unknown = i
		}
		if !isNamed(recs[i].Kind) {
			continue
		}
		for _, p := range recs[i].Prefixes {
			if _, ok := vis[p]; !ok {
				prefixes = append(prefixes, p)
			}
			vis[p] |= recs[i].Visibility
		}
	}
	sort.SliceStable(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })

	q := ""
	if pkg != "options" {
		q = "options."
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by options/internal/genoptions from %s. DO NOT EDIT.\n\n", origin)
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	fmt.Fprintf(&b, "// %s is the lookup index of %s (see recordIndex).\n", name, recsName)
	fmt.Fprintf(&b, "var %s = recordIndex{\n", name)
	ints := func(field string, list []int) {
		fmt.Fprintf(&b, "%s: []int32{", field)
		for i, v := range list {
			if i%20 == 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%d, ", v)
		}
		b.WriteString("\n},\n")
	}
	ints("ids", ids)
	ints("names", names)
	ints("next", next)
	ints("alias", alias)
	ints("group", group)
	pv := make([]string, len(prefixes))
	for i, p := range prefixes {
		if v := vis[p]; v != 0 {
			pv[i] = bits(q, v.String())
		} else {
			pv[i] = "0"
		}
	}
	fmt.Fprintf(&b, "prefixes: %s,\n", stringSlice(prefixes))
	fmt.Fprintf(&b, "prefixVis: []%sVisibility{%s},\n", q, strings.Join(pv, ", "))
	fmt.Fprintf(&b, "input: %d,\nunknown: %d,\n", input, unknown)
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
