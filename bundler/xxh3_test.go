package bundler

import (
	"testing"

	"github.com/zeebo/xxh3"
)

// xorshiftBytes returns n bytes of the xorshift64 stream that LLVM's
// unittests/Support/xxhashTest.cpp (TEST(xxhashTest, xxh3)) hashes.
func xorshiftBytes(n int) []byte {
	b := make([]byte, n)
	x := uint64(1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

// TestXXH3Vectors checks xxh3Hash64 against the values LLVM's own
// xxh3_64bits test expects (llvm/unittests/Support/xxhashTest.cpp): one or
// more per length class, including the long-input block and stripe
// boundaries.
func TestXXH3Vectors(t *testing.T) {
	buf := xorshiftBytes(2243)
	for _, v := range []struct {
		n    int
		want uint64
	}{
		{0, 0x2d06800538d394c2},
		{1, 0xd0d496e05c553485},
		{2, 0x84d625edb7055eac},
		{3, 0x6ea2d59aca5c3778},
		{4, 0xbf65290914e80242},
		{5, 0xc01fd099ad4fc8e4},
		{6, 0x9e3ea8187399caa5},
		{7, 0x9da8b60540644f5a},
		{8, 0xabc1413da6cd0209},
		{9, 0x8bc89400bfed51f6},
		{16, 0x7e46916754d7c9b8},
		{17, 0xed4be912ba5f836d},
		{32, 0xf59b59b58c304fd1},
		{33, 0x9013fb74ca603e0c},
		{64, 0xfa5271fcce0db1c3},
		{65, 0x79c42431727f1012},
		{96, 0x591ee0ddf9c9ccd1},
		{97, 0x8ffc6a3111fe19da},
		{128, 0x06a146ee9a2da378},
		{129, 0xbc7138129bf065da},
		{403, 0xcefeb3ffa532ad8c},
		{512, 0xcdfa6b6268e3650f},
		{513, 0x4bb5d42742f9765f},
		{2048, 0x330ce110cbb79eae},
		{2049, 0x3ba6afa0249fef9a},
		{2240, 0xd61d4d2a94e926a8},
		{2243, 0x0979f786a24edde7},
	} {
		if got := xxh3Hash64(string(buf[:v.n])); got != v.want {
			t.Errorf("xxh3Hash64(len %d) = %#016x, want %#016x", v.n, got, v.want)
		}
	}
}

// TestXXH3MatchesZeebo compares xxh3Hash64 with github.com/zeebo/xxh3 for
// every length 0..2048 (all length classes, and long inputs of one and two
// 1024-byte blocks with every stripe remainder), on two pseudo-random
// inputs per length: a prefix and a suffix of one buffer.
func TestXXH3MatchesZeebo(t *testing.T) {
	const max = 2048
	buf := make([]byte, 2*max)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range buf {
		// splitmix64
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
		z = (z ^ z>>27) * 0x94D049BB133111EB
		buf[i] = byte(z ^ z>>31)
	}
	for n := 0; n <= max; n++ {
		for _, in := range [][]byte{buf[:n], buf[len(buf)-n:]} {
			if got, want := xxh3Hash64(string(in)), xxh3.Hash(in); got != want {
				t.Fatalf("xxh3Hash64(%d bytes %x...) = %#016x, zeebo/xxh3 %#016x", n, in[:min(n, 16)], got, want)
			}
		}
	}
}

// FuzzXXH3 compares xxh3Hash64 with github.com/zeebo/xxh3 on arbitrary
// inputs.
func FuzzXXH3(f *testing.F) {
	buf := xorshiftBytes(2300)
	for _, n := range []int{0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 1025, 2048, 2049, 2300} {
		f.Add(buf[:n])
	}
	f.Add([]byte("hipv4-amdgcn-amd-amdhsa--gfx90a"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := xxh3Hash64(string(in)), xxh3.Hash(in); got != want {
			t.Fatalf("xxh3Hash64(%d bytes) = %#016x, zeebo/xxh3 %#016x", len(in), got, want)
		}
	})
}
