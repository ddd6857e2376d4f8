// Package packager reads and writes LLVM offload binaries (magic 0x10FF10AD,
// format version 1), byte-identical to LLVM 22's llvm-offload-binary.
package packager

// ImageKind is the OffloadBinary image kind (IMG_*).
type ImageKind uint16

// OffloadKind is the OffloadBinary offload kind (OFK_*). It is not the
// driver's offload-kind bit set.
type OffloadKind uint16

// KeyValue is one string entry of an image, in the order it is written.
type KeyValue struct{ Key, Value string }

// Image is one entry of an offload binary: its kinds, its string entries
// and its bytes.
type Image struct {
	Kind    ImageKind
	Offload OffloadKind
	Flags   uint32
	Strings []KeyValue
	Data    []byte
}

// Get returns the value of key (the last one when repeated) and whether it exists.
func (im *Image) Get(key string) (string, bool) {
	v, ok := "", false
	for _, kv := range im.Strings {
		if kv.Key == key {
			v, ok = kv.Value, true
		}
	}
	return v, ok
}
