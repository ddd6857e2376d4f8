package bundler

import (
	"bytes"
	"fmt"
)

// readEntries returns the bundle entries of an uncompressed input of file
// type typ in the order clang reads them: binary bundles in llvm::StringMap
// order (ListOrder), text bundles and object sections in file order. For
// -type=o and -type=a an ELF object is read as an object bundle and
// anything else as a binary bundle; input without the binary magic has no
// entries (clang treats it as not bundled).
func readEntries(data []byte, typ string) ([]Entry, error) {
	if c, ok := CommentFor(typ); ok {
		return ParseText(data, c)
	}
	switch typ {
	case "o", "a":
		if IsObject(data) {
			return ObjectEntries(data)
		}
	case "bc", "gch", "ast":
	default:
		return nil, fmt.Errorf("'%s': invalid file type specified", typ)
	}
	if !IsBinaryBundle(data) {
		return nil, nil
	}
	e, err := ParseBinary(data)
	if err != nil {
		return nil, err
	}
	return ListOrder(e), nil
}

// entryPayload returns what unbundling writes for entry e of input data:
// its payload, or for the host entry of an object bundle (one 0 byte) the
// object without its bundle sections.
func entryPayload(data []byte, e Entry) ([]byte, error) {
	if isHostPlaceholder(e.Data) && IsObject(data) {
		var buf bytes.Buffer
		if err := WriteHostObject(&buf, data); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return e.Data, nil
}
