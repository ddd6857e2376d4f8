package bundler

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/offcc/offcc/bundler/ccob"
	"github.com/offcc/offcc/internal/mmapfile"
	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/target"
)

// config is the parsed command line and environment.
type config struct {
	typ                                     string
	targets, inputs, outputs                []string
	inputsOld, outputsOld                   []string
	nInput, nInputs, nOutput, nOutputs      int
	nTargets, nType                         int
	unbundle, list, allowMissing, checkAr   bool
	hipOpenMP, compress, verbose, printCmds bool
	help, version                           bool
	llvm19                                  bool // LLVM 19's -targets (MainRelease)
	align                                   uint64
	level                                   int
	levelSet                                bool
	ccobVersion                             uint16
	nCompress, nVerbose                     int
}

// usageError is a command-line error.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// Main runs clang-offload-bundler with arguments args (without the program
// name), reading the environment through getenv (nil: os.Getenv) and
// writing to stdout and stderr. It returns the exit status: 0 on success, 1
// on error after printing "<prog>: error: <msg>". Output files are written
// atomically: on error none is left behind, complete or partial.
func Main(prog string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return MainRelease(22, prog, args, getenv, stdout, stderr)
}

// MainRelease is Main as the clang-offload-bundler of LLVM release major
// (19 or 22) runs: 19 reads -targets as ParseID19 does and stores its
// IDs ("host-x86_64-unknown-linux--"), 22 as ParseID does; the rest is
// the same in both.
func MainRelease(major int, prog string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if getenv == nil {
		getenv = os.Getenv
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	c, err := parseArgs(args)
	if err != nil {
		return fail(err)
	}
	c.llvm19 = major == 19
	if c.help {
		io.WriteString(stdout, helpText)
		return 0
	}
	if c.version {
		version := "22.1.8"
		if c.llvm19 {
			version = "19.1.7"
		}
		fmt.Fprintf(stdout, "offcc clang-offload-bundler, compatible with clang-offload-bundler version %s\n", version)
		return 0
	}
	warn := func(format string, args ...any) {
		fmt.Fprintf(stderr, "%s: warning: %s\n", prog, fmt.Sprintf(format, args...))
	}
	applyEnv(c, getenv, stderr)
	if err := run(c, stdout, stderr, warn); err != nil {
		return fail(err)
	}
	return 0
}

// boolOpts and valueOpts are the options clang-offload-bundler accepts.
var boolOpts = map[string]bool{
	"unbundle": true, "list": true, "###": true, "allow-missing-bundles": true,
	"check-input-archive": true, "hip-openmp-compatible": true, "compress": true,
	"verbose": true, "help": true, "h": true, "help-hidden": true, "help-list": true,
	"help-list-hidden": true, "version": true,
}
var valueOpts = map[string]bool{
	"type": true, "targets": true, "input": true, "inputs": true, "output": true,
	"outputs": true, "bundle-align": true, "compression-level": true,
}

// parseArgs parses LLVM cl::opt style arguments: -name or --name, values as
// -name=value or -name value, comma-separated lists for -targets, -inputs
// and -outputs.
func parseArgs(args []string) (*config, error) {
	c := &config{align: 1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			return nil, errorf("Unknown command line argument '%s'.  Try: 'clang-offload-bundler --help'", a)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		val, hasVal := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, val, hasVal = name[:k], name[k+1:], true
		}
		switch {
		case boolOpts[name]:
			b := true
			if hasVal {
				switch val {
				case "true", "TRUE", "True", "1":
				case "false", "FALSE", "False", "0":
					b = false
				default:
					return nil, errorf("for the --%s option: '%s' is invalid value for boolean argument! Try 0 or 1", name, val)
				}
			}
			switch name {
			case "unbundle":
				c.unbundle = b
			case "list":
				c.list = b
			case "###":
				c.printCmds = b
			case "allow-missing-bundles":
				c.allowMissing = b
			case "check-input-archive":
				c.checkAr = b
			case "hip-openmp-compatible":
				c.hipOpenMP = b
			case "compress":
				c.compress = b
				c.nCompress = 1
			case "verbose":
				c.verbose = b
				c.nVerbose = 1
			case "version":
				c.version = true
			default:
				c.help = true
			}
		case valueOpts[name]:
			if !hasVal {
				if i+1 >= len(args) {
					return nil, errorf("for the --%s option: requires a value!", name)
				}
				i++
				val = args[i]
			}
			switch name {
			case "type":
				c.typ = val
				c.nType++
			case "targets":
				c.targets = append(c.targets, strings.Split(val, ",")...)
				c.nTargets++
			case "input":
				c.inputs = append(c.inputs, val)
				c.nInput++
			case "inputs":
				c.inputsOld = append(c.inputsOld, strings.Split(val, ",")...)
				c.nInputs++
			case "output":
				c.outputs = append(c.outputs, val)
				c.nOutput++
			case "outputs":
				c.outputsOld = append(c.outputsOld, strings.Split(val, ",")...)
				c.nOutputs++
			case "bundle-align":
				n, err := strconv.ParseUint(val, 0, 32)
				if err != nil {
					return nil, errorf("for the --bundle-align option: '%s' value invalid for uint argument!", val)
				}
				c.align = n
			case "compression-level":
				n, err := strconv.ParseInt(val, 0, 32)
				if err != nil {
					return nil, errorf("for the --compression-level option: '%s' value invalid for integer argument!", val)
				}
				c.level, c.levelSet = int(n), true
			}
		default:
			return nil, errorf("Unknown command line argument '%s'.  Try: 'clang-offload-bundler --help'", a)
		}
	}
	if c.help || c.version {
		return c, nil
	}
	if c.nType == 0 {
		return nil, errorf("for the --type option: must be specified at least once!")
	}
	return c, nil
}

// applyEnv applies the OFFLOAD_BUNDLER_* environment variables (unless
// OFFLOAD_BUNDLER_IGNORE_ENV_VAR=1); command-line -compress and -verbose
// win over them.
func applyEnv(c *config, getenv func(string) string, stderr io.Writer) {
	c.ccobVersion = 3
	compress, verbose, level, levelSet := false, false, 0, false
	if getenv("OFFLOAD_BUNDLER_IGNORE_ENV_VAR") != "1" {
		if v := getenv("OFFLOAD_BUNDLER_VERBOSE"); v != "" {
			verbose = v == "1"
		}
		if v := getenv("OFFLOAD_BUNDLER_COMPRESS"); v != "" {
			compress = v == "1"
		}
		if v := getenv("OFFLOAD_BUNDLER_COMPRESSION_LEVEL"); v != "" {
			if n, err := strconv.Atoi(v); err == nil {
				level, levelSet = n, true
			} else {
				fmt.Fprintf(stderr, "Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: %s. Ignoring it.\n", v)
			}
		}
		if v := getenv("COMPRESSED_BUNDLE_FORMAT_VERSION"); v != "" {
			n, err := strconv.ParseUint(v, 10, 16)
			switch {
			case err != nil:
				fmt.Fprintf(stderr, "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: %s. Using default version 3.\n", v)
			case n < 2 || n > 3:
				fmt.Fprintf(stderr, "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: %s. Valid values are 2 or 3. Using default version 3.\n", v)
			default:
				c.ccobVersion = uint16(n)
			}
		}
	}
	if c.nCompress == 0 {
		c.compress = compress
	}
	if c.nVerbose == 0 {
		c.verbose = verbose
	}
	if !c.levelSet && levelSet {
		c.level, c.levelSet = level, true
	}
}

func run(c *config, stdout, stderr io.Writer, warn func(string, ...any)) error {
	if c.nInput != 0 && c.nInputs != 0 {
		return errorf("-inputs and -input cannot be used together, use only -input instead")
	}
	if len(c.inputsOld) > 0 {
		warn("-inputs is deprecated, use -input instead")
		c.inputs = append(c.inputs, c.inputsOld...)
	}
	if c.nOutput != 0 && c.nOutputs != 0 {
		return errorf("-outputs and -output cannot be used together, use only -output instead")
	}
	if len(c.outputsOld) > 0 {
		warn("-outputs is deprecated, use -output instead")
		c.outputs = append(c.outputs, c.outputsOld...)
	}
	var verbose io.Writer
	if c.verbose {
		verbose = stderr
	}
	if c.list {
		switch {
		case c.unbundle:
			return errorf("-unbundle and -list cannot be used together")
		case len(c.inputs) != 1:
			return errorf("only one input file supported for -list")
		case len(c.outputs) != 0:
			return errorf("-outputs option is invalid for -list")
		case len(c.targets) != 0:
			return errorf("-targets option is invalid for -list")
		}
		return listFile(c, c.inputs[0], stdout, verbose)
	}
	if c.checkAr {
		if !c.unbundle {
			return errorf("-check-input-archive cannot be used while bundling")
		}
		if c.typ != "a" {
			return errorf("-check-input-archive can only be used for unbundling archives (-type=a)")
		}
	}
	if len(c.outputs) == 0 {
		return errorf("no output file specified!")
	}
	if c.nTargets == 0 {
		return errorf("for the --targets option: must be specified at least once!")
	}
	if c.unbundle {
		if len(c.inputs) != 1 {
			return errorf("only one input file supported in unbundling mode")
		}
		if len(c.outputs) != len(c.targets) {
			return errorf("number of output files and targets should match in unbundling mode")
		}
	} else {
		if c.typ == "a" {
			return errorf("Archive files are only supported for unbundling")
		}
		if len(c.outputs) != 1 {
			return errorf("only one output file supported in bundling mode")
		}
		if len(c.inputs) != len(c.targets) {
			return errorf("number of input files and targets should match in bundling mode")
		}
	}
	ids, hostIndex, hipOnly, err := checkTargets(c.targets, c.unbundle, c.llvm19)
	if err != nil {
		return err
	}
	out := &outputs{stdout: stdout}
	switch {
	case c.unbundle && c.typ == "a":
		err = unbundleArchive(c, ids, out, verbose)
	case c.unbundle:
		err = unbundleFile(c, ids, hostIndex, out, verbose)
	default:
		err = bundleFiles(c, ids, hostIndex, hipOnly, out, verbose)
	}
	if err != nil {
		out.abort()
		return err
	}
	return out.commit()
}

// checkTargets validates -targets as clang-offload-bundler (LLVM 19's
// when llvm19) does and returns the stored IDs, the index of the host
// target (-1: none) and whether all targets are HIP.
func checkTargets(targets []string, unbundle, llvm19 bool) (ids []string, hostIndex int, hipOnly bool, err error) {
	hostIndex, hipOnly = -1, true
	seen := map[string]bool{}
	byTriple := map[string][]string{}
	var keys []string
	hosts := 0
	for i, t := range targets {
		if seen[t] {
			return nil, 0, false, errorf("Duplicate targets are not allowed")
		}
		seen[t] = true
		parse := ParseID
		if llvm19 {
			parse = ParseID19
		}
		id, err := parse(t)
		if err != nil {
			return nil, 0, false, err
		}
		ids = append(ids, id.String())
		// clang 22 keys on the kind and the triple as written (not
		// normalised), 19 on the kind and its triple.
		key := id.Kind + "-" + id.Triple
		if !llvm19 {
			parts, _ := splitID(t)
			key = parts[0] + "-" + strings.Join(parts[1:5], "-")
		}
		if _, ok := byTriple[key]; !ok {
			keys = append(keys, key)
		}
		byTriple[key] = append(byTriple[key], id.TargetID)
		if id.IsHost() {
			hosts++
			hostIndex = i
		}
		if id.Kind != "hip" && id.Kind != "hipv4" {
			hipOnly = false
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if a, b, bad := target.ConflictingIDs(byTriple[k]); bad {
			return nil, 0, false, errorf("Cannot bundle inputs with conflicting targets: '%s-%s' and '%s-%s'", k, a, k, b)
		}
	}
	if (unbundle && hosts > 1) || (!unbundle && hosts != 1 && !hipOnly) {
		return nil, 0, false, errorf("expecting exactly one host target but got %d", hosts)
	}
	return ids, hostIndex, hipOnly, nil
}

// openInput maps an input file ("-": standard input).
func openInput(name string) (*mmapfile.File, error) {
	f, err := mmapfile.Open(name)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("'%s': %v", name, pe.Err)
		}
		return nil, fmt.Errorf("'%s': %v", name, err)
	}
	return f, nil
}

// decompressed returns data, decompressed when it is a CCOB envelope.
func decompressed(name string, data []byte, verbose io.Writer) ([]byte, error) {
	if !ccob.IsCompressed(data) {
		if verbose != nil {
			io.WriteString(verbose, "Uncompressed bundle.\n")
		}
		return data, nil
	}
	d, _, err := ccob.DecompressWith(data, ccob.DecompressOptions{Verbose: verbose})
	if err != nil {
		return nil, fmt.Errorf("Failed to decompress input: %s: %v", name, err)
	}
	return d, nil
}

func bundleFiles(c *config, ids []string, hostIndex int, hipOnly bool, out *outputs, verbose io.Writer) error {
	files := make([]*mmapfile.File, 0, len(c.inputs))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	payloads := make([][]byte, len(c.inputs))
	for i, name := range c.inputs {
		f, err := openInput(name)
		if err != nil {
			return err
		}
		files = append(files, f)
		payloads[i] = f.Data
	}
	if c.align == 0 {
		return errorf("-bundle-align must not be 0")
	}
	ref := hostIndex
	if hipOnly || ref < 0 {
		ref = 0
	}
	var write func(w io.Writer) error
	if comment, ok := CommentFor(c.typ); ok {
		write = func(w io.Writer) error { return WriteText(w, comment, ids, payloads) }
	} else {
		switch c.typ {
		case "o":
			if IsObject(payloads[ref]) && hostIndex >= 0 {
				write = func(w io.Writer) error { return WriteObject(w, payloads[hostIndex], ids, payloads, hostIndex) }
				break
			}
			fallthrough
		case "bc", "gch", "ast":
			write = func(w io.Writer) error { return WriteBinary(w, ids, payloads, c.align) }
		default:
			return fmt.Errorf("'%s': invalid file type specified", c.typ)
		}
	}
	if c.compress {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			return err
		}
		z, err := ccob.Compress(buf.Bytes(), ccob.Options{Version: c.ccobVersion, Method: ccob.Zstd, Level: c.level, Verbose: verbose})
		if err != nil {
			return err
		}
		return out.write(c.outputs[0], func(w io.Writer) error { _, err := w.Write(z); return err })
	}
	return out.write(c.outputs[0], write)
}

// worklist is clang's StringMap of requested targets to output files.
type worklist struct {
	m       stringMap
	outputs map[string]string
	live    map[string]bool
}

func (wl *worklist) order() []string {
	var out []string
	for _, k := range wl.m.order() {
		if key := wl.m.keys[k]; wl.live[key] {
			out = append(out, key)
		}
	}
	return out
}

func (wl *worklist) erase(k string) {
	wl.m.erase(k)
	delete(wl.live, k)
}

func unbundleFile(c *config, ids []string, hostIndex int, out *outputs, verbose io.Writer) error {
	f, err := openInput(c.inputs[0])
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := decompressed(c.inputs[0], f.Data, verbose)
	if err != nil {
		return err
	}
	entries, err := readEntries(data, c.typ)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			return fmt.Errorf("%s: %v", c.inputs[0], err)
		}
		return err
	}
	wl := &worklist{outputs: map[string]string{}, live: map[string]bool{}}
	for i, id := range ids {
		wl.m.insert(id)
		wl.outputs[id] = c.outputs[i]
		wl.live[id] = true
	}
	foundHost := false
	for _, e := range entries {
		if len(wl.live) == 0 {
			break
		}
		if _, ok := splitID(e.ID); !ok {
			return errorf("invalid bundle id read from the bundle")
		}
		code, _, _ := parseIDLoose(e.ID)
		match := ""
		for _, k := range wl.order() {
			t, _, _ := parseIDLoose(k)
			if Compatible(code, t, c.hipOpenMP) {
				match = k
				break
			}
		}
		if match == "" {
			continue
		}
		payload, err := entryPayload(data, e)
		if err != nil {
			return fmt.Errorf("%s: %v", c.inputs[0], err)
		}
		if err := out.write(wl.outputs[match], func(w io.Writer) error { _, err := w.Write(payload); return err }); err != nil {
			return err
		}
		wl.erase(match)
		if code.IsHost() {
			foundHost = true
		}
	}
	remaining := wl.order()
	if !c.allowMissing && len(remaining) > 0 {
		sorted := append([]string(nil), remaining...)
		sort.Strings(sorted)
		msg := "Can't find bundles for"
		last := len(sorted) - 1
		for i, s := range sorted {
			if i != 0 && last > 1 {
				msg += ","
			}
			msg += " "
			if i == last && i != 0 {
				msg += "and "
			}
			msg += s
		}
		return errorf("%s", msg)
	}
	if len(remaining) == len(ids) {
		for _, k := range remaining {
			id, _, _ := parseIDLoose(k)
			fill := func(w io.Writer) error { return nil }
			if id.IsHost() {
				fill = func(w io.Writer) error { _, err := w.Write(data); return err }
			}
			if err := out.write(wl.outputs[k], fill); err != nil {
				return err
			}
		}
		return nil
	}
	if !(foundHost || hostIndex < 0 || c.allowMissing) {
		return errorf("Can't find bundle for the host target")
	}
	for _, k := range remaining {
		if err := out.write(wl.outputs[k], func(io.Writer) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

func unbundleArchive(c *config, ids []string, out *outputs, verbose io.Writer) error {
	f, err := openInput(c.inputs[0])
	if err != nil {
		return err
	}
	defer f.Close()
	members, err := UnbundleArchive(f.Data, ArchiveOptions{
		Targets:             ids,
		HipOpenMPCompatible: c.hipOpenMP,
		CheckInput:          c.checkAr,
		AllowMissing:        c.allowMissing,
		ArchiveName:         c.inputs[0],
		Open: func(m []byte) ([]byte, error) {
			if !ccob.IsCompressed(m) {
				return m, nil
			}
			d, _, err := ccob.DecompressWith(m, ccob.DecompressOptions{Verbose: verbose})
			if err != nil {
				return nil, fmt.Errorf("Failed to decompress code object: %v", err)
			}
			return d, nil
		},
	})
	if err != nil {
		return err
	}
	for i, ms := range members {
		if err := out.write(c.outputs[i], func(w io.Writer) error { return objfile.WriteArchive(w, ms) }); err != nil {
			return err
		}
	}
	return nil
}

// listFile prints the bundle IDs of one input, as -list does: binary
// bundles in llvm::StringMap order, text and object bundles in file order;
// every envelope of concatenated compressed bundles in turn.
func listFile(c *config, name string, stdout, verbose io.Writer) error {
	f, err := openInput(name)
	if err != nil {
		return err
	}
	defer f.Close()
	chunks := [][]byte{f.Data}
	if ccob.IsCompressed(f.Data) {
		if chunks, err = ccob.Split(f.Data); err != nil {
			return fmt.Errorf("Failed to decompress input: %s: %v", name, err)
		}
	}
	var sb strings.Builder
	for _, ch := range chunks {
		data, err := decompressed(name, ch, verbose)
		if err != nil {
			return err
		}
		entries, err := readEntries(data, c.typ)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		for _, e := range entries {
			sb.WriteString(e.ID)
			sb.WriteByte('\n')
		}
	}
	_, err = io.WriteString(stdout, sb.String())
	return err
}
