package bundler

import "fmt"

// FormatError reports malformed bundle input: the structure being read (for
// example "binary bundle entry 3"), its byte offset in the input and what
// is wrong.
type FormatError struct {
	Structure string
	Offset    uint64
	Msg       string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s at offset %#x: %s", e.Structure, e.Offset, e.Msg)
}

func formatErr(structure string, off uint64, format string, args ...any) error {
	return &FormatError{Structure: structure, Offset: off, Msg: fmt.Sprintf(format, args...)}
}
