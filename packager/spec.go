package packager

import (
	"errors"
	"strings"
)

// ImageArgs parses the value of an --image= option exactly like
// llvm-offload-binary's getImageArguments: the text is split on every ','
// and each piece at its first '=' (a piece without '=' is a key with an
// empty value). A repeated key keeps its first position and gets ","+value
// appended to its value. The result is in the iteration order of LLVM's
// DenseMap<StringRef, StringRef>, which is the order llvm-offload-binary
// writes the string entries in; "file" and "kind" are included.
func ImageArgs(spec string) []KeyValue {
	var keys []string
	vals := make(map[string]string)
	for _, piece := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(piece, "=")
		if old, ok := vals[k]; ok {
			vals[k] = old + "," + v
			continue
		}
		vals[k] = v
		keys = append(keys, k)
	}
	order := denseMapOrder(keys)
	out := make([]KeyValue, len(order))
	for i, k := range order {
		out[i] = KeyValue{k, vals[k]}
	}
	return out
}

// ParseImageSpec parses a packing --image= value (without the "--image="
// prefix) like llvm-offload-binary. file is the value of the file key and
// kind that of the kind key (both "" when absent); strings holds the other
// keys in the order llvm-offload-binary stores them (see ImageArgs). As in
// LLVM, repeated keys are joined with ',', so "file=a.o,file=b.o" yields
// file "a.o,b.o": llvm-offload-binary then writes one blob per
// comma-separated file, each with the same kind and strings (Main does the
// same; use strings.Split(file, ",")). Note that "file=a.o,b.o" instead makes
// "b.o" a key with an empty value. The only error is a missing file key,
// which llvm-offload-binary reports as "'file' is a required image
// arguments".
func ParseImageSpec(spec string) (file string, kind string, strs []KeyValue, err error) {
	hasFile := false
	for _, kv := range ImageArgs(spec) {
		switch kv.Key {
		case "file":
			file, hasFile = kv.Value, true
		case "kind":
			kind = kv.Value
		default:
			strs = append(strs, kv)
		}
	}
	if !hasFile {
		return "", "", nil, errors.New("'file' is a required image arguments")
	}
	return file, kind, strs, nil
}
