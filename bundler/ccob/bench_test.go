package ccob

import "testing"

func benchDecompress(b *testing.B, size int, m Method) {
	data := testData(size, 1)
	env, err := Compress(data, Options{Method: m})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Decompress(env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecompressZstd300B(b *testing.B) { benchDecompress(b, 300, Zstd) }
func BenchmarkDecompressZstd8MiB(b *testing.B) { benchDecompress(b, 8<<20, Zstd) }
func BenchmarkDecompressZlib8MiB(b *testing.B) { benchDecompress(b, 8<<20, Zlib) }

func BenchmarkCompressZstd8MiB(b *testing.B) {
	data := testData(8<<20, 1)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Compress(data, Options{Method: Zstd}); err != nil {
			b.Fatal(err)
		}
	}
}
