package ccob

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// writeCompressReport writes the lines clang-offload-bundler -compress
// -verbose prints (CompressedOffloadBundle::compress in LLVM).
func writeCompressReport(w io.Writer, h Header, level, compressed int, elapsed time.Duration) {
	rate := float64(h.UncompressedSize) / float64(compressed)
	speed := float64(h.UncompressedSize) / (1024 * 1024) / elapsed.Seconds()
	fmt.Fprintf(w, "Compressed bundle format version: %d\n", h.Version)
	fmt.Fprintf(w, "Total file size (including headers): %s bytes\n", commas(h.TotalSize))
	fmt.Fprintf(w, "Compression method used: %s\n", h.Method)
	fmt.Fprintf(w, "Compression level: %d\n", level)
	fmt.Fprintf(w, "Binary size before compression: %s bytes\n", commas(h.UncompressedSize))
	fmt.Fprintf(w, "Binary size after compression: %s bytes\n", commas(uint64(compressed)))
	fmt.Fprintf(w, "Compression rate: %s\n", cfloat(rate))
	fmt.Fprintf(w, "Compression ratio: %s%%\n", cfloat(100/rate))
	fmt.Fprintf(w, "Compression speed: %s MB/s\n", cfloat(speed))
	fmt.Fprintf(w, "Truncated MD5 hash: %s\n", hex16(h.Hash))
}

// writeDecompressReport writes the lines clang-offload-bundler -verbose
// prints when it decompresses (CompressedOffloadBundle::decompress in LLVM).
func writeDecompressReport(w io.Writer, h Header, compressed int, size uint64, sum uint64, elapsed time.Duration) {
	rate := float64(h.UncompressedSize) / float64(compressed)
	speed := float64(h.UncompressedSize) / (1024 * 1024) / elapsed.Seconds()
	fmt.Fprintf(w, "Compressed bundle format version: %d\n", h.Version)
	if h.Version >= 2 {
		fmt.Fprintf(w, "Total file size (from header): %s bytes\n", commas(h.TotalSize))
	}
	fmt.Fprintf(w, "Decompression method: %s\n", h.Method)
	fmt.Fprintf(w, "Size before decompression: %s bytes\n", commas(uint64(compressed)))
	fmt.Fprintf(w, "Size after decompression: %s bytes\n", commas(size))
	fmt.Fprintf(w, "Compression rate: %s\n", cfloat(rate))
	fmt.Fprintf(w, "Compression ratio: %s%%\n", cfloat(100/rate))
	fmt.Fprintf(w, "Decompression speed: %s MB/s\n", cfloat(speed))
	fmt.Fprintf(w, "Stored hash: %s\n", hex16(h.Hash))
	fmt.Fprintf(w, "Recalculated hash: %s\n", hex16(sum))
	match := "No"
	if sum == h.Hash {
		match = "Yes"
	}
	fmt.Fprintf(w, "Hashes match: %s\n", match)
}

// commas formats n with thousands separators, like LLVM's formatWithCommas.
func commas(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// cfloat formats f like C's printf("%.2lf"), including "inf" and "nan".
func cfloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// hex16 formats v like LLVM's format_hex(v, 16): "0x" and at least 14
// lower-case hex digits.
func hex16(v uint64) string {
	return fmt.Sprintf("0x%014x", v)
}
