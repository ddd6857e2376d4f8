package ompinfo

import "bytes"

// StableDevice is the device number clang 21 and later put in the names of
// kernels and offload entries whose file it names by a hash of the file's
// name, not by its device and inode numbers: the name clang knows the file
// by does not exist on disk (see the driver's stable names).
const StableDevice = "deadf17e"

// namePrefix starts every OpenMP kernel and offload entry name:
// __omp_offloading_<device>_<file>_<parent>_l<line>, the two numbers in
// lower-case hexadecimal.
var namePrefix = []byte("__omp_offloading_")

// InodeNamed reports whether data (an object, bitcode, assembly or IR
// text: the names are plain bytes in each) holds an OpenMP kernel or entry
// name made from a file's device and inode numbers rather than from its
// name. Such a name differs between two copies of a file, two checkouts
// and two machines, so the output depends on where the build ran.
func InodeNamed(data []byte) bool {
	for {
		i := bytes.Index(data, namePrefix)
		if i < 0 {
			return false
		}
		data = data[i+len(namePrefix):]
		dev, ok := hexField(data)
		if !ok {
			continue
		}
		if _, ok := hexField(data[len(dev)+1:]); !ok {
			continue
		}
		if string(dev) != StableDevice {
			return true
		}
	}
}

// hexField returns the lower-case hexadecimal digits data starts with if
// an underscore follows them.
func hexField(data []byte) ([]byte, bool) {
	n := 0
	for n < len(data) && n < 16 && (data[n] >= '0' && data[n] <= '9' || data[n] >= 'a' && data[n] <= 'f') {
		n++
	}
	if n == 0 || n >= len(data) || data[n] != '_' {
		return nil, false
	}
	return data[:n], true
}
