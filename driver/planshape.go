package driver

import (
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/options"
)

// One plan per command shape. The files of one project are compiled with
// one set of flags: "cc FLAGS -c a.c -o a.o", then b.c, ... clang's job
// list for such a command depends on the source's and the output's names
// only where it copies them, and where it derives names from them, in
// places offcc knows. A plan is therefore also stored under the command's
// shape (planShape): its key has the source's and the output's names as
// placeholders, their extensions kept, so that the next file of the
// project finds the plan of the first and starts no clang -###. Their
// directories are placeholders too where they are relative and clean
// (one placeholder for the source's, one for the output's), and for the
// source wherever it is (a third one for an absolute directory: CMake names
// sources by absolute paths, or by relative ones under OFFCC_BASE_DIR);
// the output's other directories are keyed as they are. The shape
// is filled in on top of the places (planPlaces: the working and base
// directories and the output's stem, the private temporary directory).
//
// Where the source's names appear in clang's jobs:
//
//   - the input of every -cc1 and -cc1as job (its last argument), as
//     written on the command line;
//   - -main-file-name's value: its file name;
//   - the names of the private temporary files, which begin with its stem
//     ("TMP/k-hip-amdgcn-amd-amdhsa-gfx90a-123456.o"). These are private
//     to one build: any consistent renaming is as good as clang's.
//   - the split DWARF file of a compile and link: "-split-dwarf-file
//     OUT-STEM.dwo".
//
// The output's directory appears where the places put its stem (-o, -MT,
// -dependency-file, -dumpdir, -object-file-name, ...). A template is
// refused (the plan is then only stored as before) when the source's stem,
// or a directory that is a placeholder, appears anywhere else in a job or
// in a line that is no job: a name derived from them that offcc does not
// know, which another file would not simply replace. A name that cannot be
// matched (one clang's quoting would change, one that is not a single
// source, an extension that is not a source's: clang picks the language by
// it) gives no shape at all. Under -fuse-cuid= other than hash, clang's
// compile unit IDs are not recomputed by offcc for each source (see
// setCUID), so such commands have no shape either.

// The placeholders of shapes. Like the places', they hold a NUL byte, which
// no argument or path does.
const (
	// srcDirPlaceholder stands for the source's relative directory
	// (with its trailing slash, or empty).
	srcDirPlaceholder = "\x00OFFCC_SRCDIR\x00"
	// srcAbsPlaceholder stands for the source's absolute directory (with
	// its trailing slash; the working or base directory's placeholder
	// where it is under one).
	srcAbsPlaceholder = "\x00OFFCC_SRCABS\x00"
	// srcStemPlaceholder stands for the source's file name less its
	// extension.
	srcStemPlaceholder = "\x00OFFCC_SRCSTEM\x00"
	// outDirPlaceholder stands for the output's relative directory (with
	// its trailing slash, or empty).
	outDirPlaceholder = "\x00OFFCC_OUTDIR\x00"
	// shapeMark is added to a shape's keyed arguments, so that a shape
	// key is never another kind of key.
	shapeMark = "\x00OFFCC_SHAPE\x00"
)

// sourceExts are the extensions of sources, by which clang picks a
// language (types::lookupTypeForExtension) and which it compiles with a
// -cc1 or -cc1as job whose last argument is the source.
var sourceExts = map[string]bool{
	".c": true, ".i": true, ".cc": true, ".cp": true, ".cpp": true, ".cxx": true,
	".c++": true, ".C": true, ".CC": true, ".CPP": true, ".ii": true,
	".cu": true, ".hip": true, ".m": true, ".mm": true, ".M": true,
	".s": true, ".S": true, ".sx": true,
}

// planShape is a command line's single source and its output, as the
// shape key and a shape template name them.
type planShape struct {
	at *planPlaces
	// src is the source argument with its paths templated (templateLoc);
	// srcDir (up to its last '/'), srcStem and srcExt are its parts.
	src, srcDir, srcStem, srcExt string
	// srcPlaced and basePlaced are the source and its file name as the
	// places template them where clang copies them (planPlaces.templateOut
	// takes a source named after a link's output, "-o k", for a name
	// derived from the output: "STEM.c").
	srcPlaced, basePlaced string
	// srcDirMoved is set when srcDir is a placeholder: srcDirPlaceholder
	// or srcAbsPlaceholder, srcDirPh. srcKey is the source as keyed and as
	// a template names it.
	srcDirMoved bool
	srcDirPh    string
	srcKey      string
	// parent is the working directory's parent where no argument but the
	// source names it and the source's absolute directory is a
	// placeholder: it may then not appear in a job (see planPlaces.parent,
	// which the source's name exempted).
	parent string
	// outDirMoved is set when the output's directory (at.outDir) is a
	// placeholder (relative).
	outDirMoved bool
	// keyArgs are the arguments as keyed: the places' keyArgs with the
	// source and the output's directory placeholders, and shapeMark.
	keyArgs []string
	// named holds the keyed arguments and their values, with the places
	// and the shape templated: a job argument among them is a copy.
	named map[string]bool
}

// newPlanShape returns the shape of a command line whose places are p, or
// nil when it has none: no single source with a source's extension, an
// output that is not templated, names that cannot be matched.
func newPlanShape(p *planPlaces, args []string) *planShape {
	if p.outWord < 0 || p.parsed == nil {
		return nil
	}
	var in *options.Arg
	for _, a := range p.parsed {
		switch {
		case a.IsInput():
			if in != nil {
				return nil
			}
			in = a
		case a.Is("fuse_cuid_EQ") && a.Value() != "hash":
			return nil
		}
	}
	if in == nil || in.Index >= len(args) || args[in.Index] != in.Value() {
		return nil
	}
	raw := in.Value()
	if strings.HasPrefix(raw, "-") || strings.HasPrefix(raw, "@") || !plainName(raw) {
		return nil // an option, a response file, a name clang quotes
	}
	s := &planShape{at: p, src: p.templateLoc(raw)}
	name := s.src
	if i := strings.LastIndex(s.src, "/"); i >= 0 {
		s.srcDir, name = s.src[:i+1], s.src[i+1:]
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || !sourceExts[name[i:]] {
		return nil
	}
	s.srcStem, s.srcExt = name[:i], name[i:]
	s.srcPlaced = p.templateOut("", s.src, true)
	s.basePlaced = p.templateOut("-main-file-name", name, true)
	if s.srcStem == "." || s.srcStem == ".." || strings.HasSuffix(s.srcStem, ".") {
		return nil
	}
	s.srcDirPh = sourceDirPlaceholder(s.srcDir)
	s.srcDirMoved = s.srcDirPh != ""
	if s.srcDirPh == srcAbsPlaceholder {
		if p.cwd != "" {
			others := append(append([]string{}, args[:in.Index]...), args[in.Index+1:]...)
			if parent := filepath.Dir(p.cwd); strings.Count(parent, "/") >= 2 && parent != p.base && !argsContain(others, parent) {
				s.parent = parent
			}
		}
	}
	s.outDirMoved = p.relOut != "" && relativeDir(p.outDir)
	dir := s.srcDir
	if s.srcDirMoved {
		dir = s.srcDirPh
	}
	s.srcKey = dir + srcStemPlaceholder + s.srcExt

	s.keyArgs = make([]string, 0, len(p.keyArgs)+1)
	s.named = map[string]bool{}
	for i, w := range p.keyArgs {
		if i == in.Index {
			w = s.srcKey
		} else {
			var ok bool
			if w, ok = s.moveOutDir(w); !ok {
				return nil
			}
		}
		s.keyArgs = append(s.keyArgs, w)
		if i != in.Index {
			s.named[w] = true
		}
	}
	s.keyArgs = append(s.keyArgs, shapeMark)
	for _, a := range p.parsed {
		if a.IsInput() {
			continue
		}
		for _, v := range a.Values {
			if w, ok := s.moveOutDir(p.templateOut("", p.templateLoc(v), true)); ok {
				s.named[w] = true
			}
		}
	}
	return s
}

// relativeDir reports whether the output's directory dir (with its
// trailing slash, or "") can be a placeholder: empty, or relative, clean
// and without "..", where the places find the output (planPlaces.relOut:
// the assembler's -object-file-name joins it to the working directory).
func relativeDir(dir string) bool {
	if dir == "" {
		return true
	}
	d := strings.TrimSuffix(dir, "/")
	if d == "" || strings.HasPrefix(d, "/") || strings.Contains(d, "\x00") || strings.HasSuffix(d, "/") {
		return false
	}
	for _, part := range strings.Split(d, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// sourceDirPlaceholder returns the placeholder of a source's directory
// (with its trailing slash, or "", its paths templated): srcDirPlaceholder
// for a relative one ("", "src/", "../src/"), srcAbsPlaceholder for an
// absolute one ("/x/", or under the working or base directory's
// placeholder). clang's driver copies the source as it is written, so any
// directory of a plain name will do; only the two kinds stay apart.
func sourceDirPlaceholder(dir string) string {
	for _, ph := range []string{cwdPlaceholder, basePlaceholder} {
		if rest, ok := strings.CutPrefix(dir, ph+"/"); ok {
			if strings.Contains(rest, "\x00") {
				return ""
			}
			return srcAbsPlaceholder
		}
	}
	switch {
	case strings.Contains(dir, "\x00"):
		return ""
	case strings.HasPrefix(dir, "/"):
		return srcAbsPlaceholder
	}
	return srcDirPlaceholder
}

// moveOutDir puts the output directory's placeholder before every output
// stem placeholder in s, where the output's directory is relative. It
// reports false when a stem placeholder does not follow the directory.
func (s *planShape) moveOutDir(w string) (string, bool) {
	if !s.outDirMoved || !strings.Contains(w, stemPlaceholder) {
		return w, true
	}
	v := strings.ReplaceAll(w, s.at.outDir+stemPlaceholder, outDirPlaceholder+stemPlaceholder)
	if strings.Count(v, stemPlaceholder) != strings.Count(v, outDirPlaceholder+stemPlaceholder) {
		return "", false
	}
	return v, true
}

// template returns a plan as planPlaces.template stores it (the places
// already placeholders) with the shape's placeholders too, or false where
// a job names the source or the output's directory in a way another
// file's names would not simply replace.
func (s *planShape) template(body string) (string, bool) {
	var b strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		text, nl := strings.CutSuffix(line, "\n")
		if !strings.HasPrefix(text, ` "`) {
			if s.mentions(text) {
				return "", false
			}
			b.WriteString(line)
			continue
		}
		argv, err := actions.SplitHash(text)
		if err != nil || len(argv) < 2 || renderHash(argv) != text {
			return "", false
		}
		lang := ""
		if n := len(argv); n >= 3 && argv[n-3] == "-x" {
			lang = argv[n-2]
		}
		cc1 := argv[1] == "-cc1" || argv[1] == "-cc1as"
		out := make([]string, len(argv))
		for i, u := range argv {
			prev := ""
			if i > 0 {
				prev = argv[i-1]
			}
			v, ok := s.token(prev, u, cc1 && i == len(argv)-1, lang)
			if !ok {
				return "", false
			}
			out[i] = v
		}
		b.WriteString(renderHash(out))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String(), true
}

// mentions reports whether a line that is no job names the source's stem
// or a relative directory of the shape.
func (s *planShape) mentions(text string) bool {
	text = s.at.withoutToolPaths(text)
	return stemIndex(text, s.srcStem, 0) >= 0 || s.dirIndex(text) >= 0 || s.parent != "" && strings.Contains(text, s.parent)
}

// dirIndex returns the index of the source's or the output's directory,
// where it is a placeholder, at which it begins a path in u, or -1.
func (s *planShape) dirIndex(u string) int {
	for _, d := range []string{s.srcDir, s.at.outDir} {
		switch {
		case d == "", d == s.srcDir && !s.srcDirMoved, d == s.at.outDir && !s.outDirMoved:
			continue
		case d == cwdPlaceholder+"/", d == basePlaceholder+"/":
			continue // the places' paths, which they check
		}
		for off := 0; ; {
			i := strings.Index(u[off:], d)
			if i < 0 {
				break
			}
			i += off
			if pathStart(u, i) {
				return i
			}
			off = i + 1
		}
	}
	return -1
}

// token templates the shape in one job argument u (prev is the one before
// it; last says that u ends a -cc1 or -cc1as job, whose input language is
// lang).
func (s *planShape) token(prev, u string, last bool, lang string) (string, bool) {
	switch {
	case last && u == s.srcPlaced:
		return s.srcKey, true
	case prev == "-main-file-name" && u == s.basePlaced:
		return srcStemPlaceholder + s.srcExt, true
	case (prev == "-split-dwarf-file" || prev == "-split-dwarf-output") && u == s.at.outDir+stemPlaceholder+"-"+s.srcStem+".dwo":
		// A compile and link: -dumpdir's prefix and the input's stem.
		v, ok := s.moveOutDir(s.at.outDir + stemPlaceholder)
		return v + "-" + srcStemPlaceholder + ".dwo", ok
	}
	v, ok := s.moveOutDir(u)
	if !ok {
		return "", false
	}
	if s.named[v] {
		return v, true
	}
	if strings.HasPrefix(v, "-cuid=") && lang != "hip" && lang != "cuda" {
		// Only the HIP and CUDA builders put in each source's own ID.
		return "", false
	}
	if strings.Contains(v, tempPlaceholder) {
		if v, ok = s.tempNames(v); !ok {
			return "", false
		}
	}
	rest := strings.ReplaceAll(v, srcStemPlaceholder, "")
	if (stemIndex(rest, s.srcStem, 0) >= 0 || s.dirIndex(rest) >= 0) && !optionSpelling(s.at.tables, u) {
		return "", false
	}
	if s.parent != "" && strings.Contains(s.at.withoutToolPaths(rest), s.parent) {
		return "", false
	}
	return v, true
}

// optionSpelling reports whether u is a whole -cc1 option spelling whose
// value, if any, is the next argument ("-main-file-name", "-x"): a stem
// in it is part of the name, not a path.
func optionSpelling(tables *options.Tables, u string) bool {
	if isOptionName(tables, u) {
		return true
	}
	if !strings.HasPrefix(u, "-") {
		return false
	}
	a, err := tables.ClangCC1().ParseOne([]string{u, ""}, 0)
	return err == nil && !a.IsInput() && !a.IsUnknown() && a.Spelling == u && a.Option.Kind == options.JoinedOrSeparate
}

// tempNames puts the source's stem placeholder in every private
// temporary file's name in v, each of which must begin with the source's
// stem and a '-': clang names its temporaries after the input, and other
// names could meet the new ones.
func (s *planShape) tempNames(v string) (string, bool) {
	prefix := tempPlaceholder + "/"
	var b strings.Builder
	for {
		i := strings.Index(v, prefix)
		if i < 0 {
			break
		}
		rest := v[i+len(prefix):]
		if !strings.HasPrefix(rest, s.srcStem+"-") {
			return "", false
		}
		b.WriteString(v[:i])
		b.WriteString(prefix + srcStemPlaceholder)
		v = rest[len(s.srcStem):]
	}
	b.WriteString(v)
	return b.String(), true
}

// fill puts the shape's names into a template: the source's directory
// and stem and the output's directory (the places are filled after).
func (s *planShape) fill(body string) string {
	pairs := []string{srcStemPlaceholder, s.srcStem}
	if s.srcDirMoved {
		pairs = append(pairs, s.srcDirPh, s.srcDir)
	}
	if s.outDirMoved {
		pairs = append(pairs, outDirPlaceholder, s.at.outDir)
	}
	return strings.NewReplacer(pairs...).Replace(body)
}
