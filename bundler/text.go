package bundler

import (
	"bytes"
	"fmt"
	"io"
)

// CommentFor returns the line comment marker clang uses for text bundles
// of file type typ ("//" for i, ii, cui, hipi; ";" for ll; "#" for s, d),
// or ok false for a type that is not a text type.
func CommentFor(typ string) (comment string, ok bool) {
	switch typ {
	case "i", "ii", "cui", "hipi":
		return "//", true
	case "ll":
		return ";", true
	case "s", "d":
		return "#", true
	}
	return "", false
}

func startMarker(comment string) string { return "\n" + comment + " " + Magic + "__START__ " }
func endMarker(comment string) string   { return "\n" + comment + " " + Magic + "__END__ " }

// IsTextBundle reports whether b starts like a text bundle written by clang
// (a newline and a START marker) and with which comment marker.
func IsTextBundle(b []byte) (comment string, ok bool) {
	for _, c := range []string{"//", ";", "#"} {
		if bytes.HasPrefix(b, []byte(startMarker(c))) {
			return c, true
		}
	}
	return "", false
}

// WriteText writes a text bundle: for each payload, in order,
// "\n<C> __CLANG_OFFLOAD_BUNDLE____START__ <ID>\n", the payload, and
// "\n<C> __CLANG_OFFLOAD_BUNDLE____END__ <ID>\n".
func WriteText(w io.Writer, comment string, ids []string, payloads [][]byte) error {
	if len(ids) != len(payloads) {
		return fmt.Errorf("text bundle: %d IDs but %d payloads", len(ids), len(payloads))
	}
	for i, id := range ids {
		if _, err := io.WriteString(w, startMarker(comment)+id+"\n"); err != nil {
			return err
		}
		if _, err := w.Write(payloads[i]); err != nil {
			return err
		}
		if _, err := io.WriteString(w, endMarker(comment)+id+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// ParseText parses a text bundle with comment marker comment as clang's
// reader does: each entry starts after the next START marker's line (the
// ID is the rest of that line) and its payload runs to the next END
// marker; reading goes on after the END marker's line. Text before, between
// and after entries is ignored. A START line without a newline ends the
// bundle; a payload without an END marker is an error (clang would read
// past its buffer).
func ParseText(b []byte, comment string) ([]Entry, error) {
	start, end := []byte(startMarker(comment)), []byte(endMarker(comment))
	var entries []Entry
	pos := 0
	for {
		i := bytes.Index(b[pos:], start)
		if i < 0 {
			return entries, nil
		}
		markAt := pos + i
		idAt := markAt + len(start)
		nl := bytes.IndexByte(b[idAt:], '\n')
		if nl < 0 {
			return entries, nil
		}
		id := string(b[idAt : idAt+nl])
		dataAt := idAt + nl + 1
		st := fmt.Sprintf("text bundle entry %d", len(entries))
		if id == "" {
			return nil, formatErr(st, uint64(markAt), "empty bundle ID")
		}
		e := bytes.Index(b[dataAt:], end)
		if e < 0 {
			return nil, formatErr(st, uint64(markAt), "no END marker for %q", id)
		}
		dataEnd := dataAt + e
		entries = append(entries, Entry{ID: id, Offset: uint64(dataAt), Size: uint64(e), Data: b[dataAt:dataEnd:dataEnd]})
		// Skip the END line: the next newline after the marker's own.
		nl2 := bytes.IndexByte(b[dataEnd+1:], '\n')
		if nl2 < 0 {
			return entries, nil
		}
		pos = dataEnd + 1 + nl2 + 1
	}
}
