package packager

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/internal/mmapfile"
	"github.com/offcc/offcc/objfile"
)

// Version is what Main prints for --version.
const Version = "offcc offload-binary (LLVM 22 compatible)"

const usageText = `OVERVIEW: A utility for bundling several object files into a single binary.
The output binary can then be embedded into the host section table
to create a fatbinary containing offloading code.

USAGE: %[1]s offload-binary [options] <input file>

OPTIONS:
  --archive                   - Write extracted files to a static archive
  --help, -h                  - Display available options
  --image=<<key>=<value>,...> - List of key and value arguments. Required keywords are 'file' and 'triple'.
  -o <file>                   - Write output to <file>.
  --version                   - Display the version of this program

Packing:    %[1]s offload-binary -o OUT --image=file=F,triple=T,arch=A[,kind=K][,key=value...] ...
Extracting: %[1]s offload-binary IN --image=triple=T,arch=A[,kind=K][,file=F] ...
`

// Main runs "offcc offload-binary" with llvm-offload-binary's command line
// (args excludes the program name) and returns the exit status.
//
// With -o OUT it packs every --image=k=v,... (file= is required and may be
// repeated to pack several files with the same keys; kind= sets the
// OffloadKind; the ImageKind comes from ImageKindFor) into OUT, written
// atomically ("-" is standard output). With an input file IN it extracts:
// for each --image, the image bytes of every blob whose keys all match
// (kind= compares the OffloadKind, file= names the output) are written to
// file (the last match, with LLVM's warning when several match) or, without
// file=, to <stem of IN>-<triple>-<arch>.<index>.<ext> in the current
// directory (as in LLVM 22, <ext> is empty for kinds without a name and the
// '-' stays when arch is empty). IN may be a raw offload binary, an ELF
// file (sections of type SHT_LLVM_OFFLOADING) or an ar archive of those;
// other inputs hold nothing (see ExtractImages). With --archive the matches
// are written as members of the GNU ar archive file=, byte-identical to
// LLVM's. Not supported: LLVM bitcode inputs, and --archive with bitcode
// images (their symbol table needs LLVM's IR reader). Errors are printed as
// "<prog>: error: <msg>" and give status 1.
func Main(prog string, args []string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		fmt.Fprintf(stderr, "%s: error: %s\n", prog, msg)
		return 1
	}
	var (
		out, in       string
		haveOut       bool
		images        []string
		archive, help bool
	)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, p := range args[i+1:] {
				if in != "" {
					return fail(fmt.Errorf("too many positional arguments specified: '%s'", p))
				}
				in = p
			}
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if in != "" {
				return fail(fmt.Errorf("too many positional arguments specified: '%s'", a))
			}
			in = a
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, val, hasVal := strings.Cut(name, "=")
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("option '%s' requires a value", a)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "o":
			out, err = value()
			haveOut = true
		case "image":
			var v string
			v, err = value()
			images = append(images, v)
		case "archive", "h", "help", "version":
			if hasVal {
				return fail(fmt.Errorf("option '%s' does not take a value", a))
			}
			switch name {
			case "archive":
				archive = true
			case "version":
				fmt.Fprintln(stdout, Version)
				return 0
			default:
				help = true
			}
		default:
			return fail(fmt.Errorf("unknown command line argument '%s'; try '%s offload-binary --help'", a, prog))
		}
		if err != nil {
			return fail(err)
		}
	}
	if help || ((!haveOut || out == "") && in == "") {
		fmt.Fprintf(stdout, usageText, prog)
		return 0
	}
	if in != "" && out != "" {
		return fail(errors.New("Packaging to an output file and extracting from an input file are mutually exclusive."))
	}
	var err error
	if out != "" {
		err = pack(out, images, stdout)
	} else {
		err = extract(prog, in, images, archive, stderr)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

func pack(out string, specs []string, stdout io.Writer) error {
	files, err := FileImagesFromSpecs(specs)
	if err != nil {
		return err
	}
	if out == "-" {
		return WriteFiles(stdout, files)
	}
	return atomicfile.WriteFunc(out, 0o666, func(w io.Writer) error { return WriteFiles(w, files) })
}

func extract(prog, in string, specs []string, archive bool, stderr io.Writer) error {
	input, err := mmapfile.Open(in)
	if err != nil {
		return err
	}
	defer input.Close()
	images, err := extractNamed(input.Data, in)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	stem := filepath.Base(in)
	if stem == "." || stem == ".." || stem == "/" {
		stem = ""
	} else if i := strings.LastIndexByte(stem, '.'); i >= 0 {
		stem = stem[:i]
	}
	for _, spec := range specs {
		args := ImageArgs(spec)
		var matched []*namedImage
		for i := range images {
			if matches(&images[i].Image, args) {
				matched = append(matched, &images[i])
			}
		}
		if len(matched) == 0 {
			continue
		}
		file, hasFile := "", false
		for _, kv := range args {
			if kv.Key == "file" {
				file, hasFile = kv.Value, true
			}
		}
		switch {
		case archive:
			if !hasFile {
				return errors.New("Image must have a 'file' argument.")
			}
			ar, err := writeArchive(matched)
			if err != nil {
				return err
			}
			if err := atomicfile.Write(file, ar, 0o666); err != nil {
				return err
			}
		case hasFile:
			if len(matched) > 1 {
				fmt.Fprintf(stderr, "%s: warning: Multiple inputs match to a single file, '%s'\n", prog, file)
			}
			if err := atomicfile.Write(file, matched[len(matched)-1].Data, 0o666); err != nil {
				return err
			}
		default:
			for idx, im := range matched {
				// LLVM 22 writes the '-' even when arch is empty.
				triple, _ := im.Get("triple")
				arch, _ := im.Get("arch")
				name := stem + "-" + triple + "-" + arch + "." + strconv.Itoa(idx) + "." + im.Kind.Extension()
				if err := atomicfile.Write(name, im.Data, 0o666); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func matches(im *Image, args []KeyValue) bool {
	for _, kv := range args {
		switch kv.Key {
		case "file":
		case "kind":
			if im.Offload != ParseOffloadKind(kv.Value) {
				return false
			}
		default:
			if v, _ := im.Get(kv.Key); v != kv.Value {
				return false
			}
		}
	}
	return true
}

// ExtractImages returns the images of every offload binary in data: a raw
// blob sequence, an ELF file (each section of type SHT_LLVM_OFFLOADING) or
// an ar archive whose members are any of these (recursively). LLVM bitcode
// (whose llvm.embedded.objects LLVM would read) is an error; other inputs
// hold no images and give an empty result, as in LLVM.
func ExtractImages(data []byte) ([]Image, error) {
	named, err := extractNamed(data, "")
	if err != nil {
		return nil, err
	}
	images := make([]Image, len(named))
	for i, n := range named {
		images[i] = n.Image
	}
	return images, nil
}

// namedImage is an image and the name LLVM gives its buffer: the input
// file name, or the archive member name for images found in archives.
type namedImage struct {
	Image
	source string
}

func extractNamed(data []byte, name string) ([]namedImage, error) {
	var ims []Image
	var err error
	switch {
	case IsBitcode(data):
		return nil, errors.New("extracting offload binaries from LLVM bitcode is not supported")
	case IsOffloadBinary(data):
		ims, err = Parse(data)
	case objfile.IsELF(data):
		ims, err = ImagesInELF(data)
	case bytes.HasPrefix(data, []byte("!<arch>\n")):
		return extractArchive(data)
	}
	if err != nil {
		return nil, err
	}
	out := make([]namedImage, len(ims))
	for i, im := range ims {
		out[i] = namedImage{im, name}
	}
	return out, nil
}

// ErrNotReadableELF is wrapped by ImagesInELF's error for an input that is
// not an ELF file objfile can read (32-bit, big-endian, malformed).
var ErrNotReadableELF = errors.New("not a readable ELF64 little-endian file")

// ImagesInELF parses the contents of each SHT_LLVM_OFFLOADING section of an
// ELF64 little-endian relocatable object, executable or shared object, in
// section order. Empty (and SHT_NOBITS) sections are skipped. SHF_COMPRESSED
// sections are not decompressed (LLVM never compresses this section); one
// fails to parse with an error saying it looks compressed. An input
// objfile cannot read as ELF gives an error wrapping ErrNotReadableELF.
func ImagesInELF(data []byte) ([]Image, error) {
	secs, err := objfile.SectionsOfType(data, objfile.SHTLLVMOffloading)
	if err != nil {
		return nil, fmt.Errorf("reading ELF: %w: %w", ErrNotReadableELF, err)
	}
	var images []Image
	for i, sec := range secs {
		if len(sec) == 0 {
			continue
		}
		ims, err := Parse(sec)
		if err != nil {
			// An Elf64_Chdr starts with ch_type ELFCOMPRESS_ZLIB (1) or
			// ELFCOMPRESS_ZSTD (2) and a zero ch_reserved.
			if len(sec) >= 8 && (sec[0] == 1 || sec[0] == 2) && string(sec[1:8]) == "\x00\x00\x00\x00\x00\x00\x00" {
				return nil, fmt.Errorf("SHT_LLVM_OFFLOADING section %d of %d: compressed (SHF_COMPRESSED) sections are not supported", i+1, len(secs))
			}
			return nil, fmt.Errorf("SHT_LLVM_OFFLOADING section %d of %d: %w", i+1, len(secs), err)
		}
		images = append(images, ims...)
	}
	return images, nil
}

// extractArchive extracts from each member of a GNU or BSD ar archive, in
// order; images found in a member are named by the member name.
func extractArchive(data []byte) ([]namedImage, error) {
	a, err := objfile.ParseArchive(data)
	if err != nil {
		return nil, err
	}
	var images []namedImage
	for _, m := range a.Members {
		ims, err := extractNamed(m.Data, m.Name)
		if err != nil {
			return nil, fmt.Errorf("archive member %q: %w", m.Name, err)
		}
		images = append(images, ims...)
	}
	return images, nil
}
