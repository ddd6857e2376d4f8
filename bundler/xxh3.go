package bundler

import "math/bits"

// A scalar XXH3_64bits with seed 0 and the default secret, following the
// reference xxhash.h (v0.8). It replaces github.com/zeebo/xxh3, whose SIMD
// dispatch links in github.com/klauspost/cpuid/v2 and makes every offcc
// process run CPUID in a package init (slow where CPUID traps to a
// hypervisor). The only caller hashes short bundle IDs, so speed beyond
// "scalar" does not matter, but every length class is implemented so that
// the function is XXH3_64bits for any input; xxh3_test.go compares it with
// zeebo/xxh3 for every length up to 2048 and fuzzes it.

const (
	xxhPrime32_1 = 0x9E3779B1
	xxhPrime32_2 = 0x85EBCA77
	xxhPrime32_3 = 0xC2B2AE3D

	xxhPrime64_1 = 0x9E3779B185EBCA87
	xxhPrime64_2 = 0xC2B2AE3D27D4EB4F
	xxhPrime64_3 = 0x165667B19E3779F9
	xxhPrime64_4 = 0x85EBCA77C2B2AE63
	xxhPrime64_5 = 0x27D4EB2F165667C5

	xxh3StripeLen        = 64
	xxh3SecretConsume    = 8 // secret bytes consumed per stripe
	xxh3SecretLastAcc    = 7 // XXH_SECRET_LASTACC_START
	xxh3SecretMergeStart = 11
	xxh3MidStartOffset   = 3  // XXH3_MIDSIZE_STARTOFFSET
	xxh3MidLastOffset    = 17 // XXH3_MIDSIZE_LASTOFFSET
	xxh3SecretSizeMin    = 136
)

// xxh3Secret is XXH3_kSecret, the 192-byte default secret.
const xxh3Secret = "" +
	"\xb8\xfe\x6c\x39\x23\xa4\x4b\xbe\x7c\x01\x81\x2c\xf7\x21\xad\x1c" +
	"\xde\xd4\x6d\xe9\x83\x90\x97\xdb\x72\x40\xa4\xa4\xb7\xb3\x67\x1f" +
	"\xcb\x79\xe6\x4e\xcc\xc0\xe5\x78\x82\x5a\xd0\x7d\xcc\xff\x72\x21" +
	"\xb8\x08\x46\x74\xf7\x43\x24\x8e\xe0\x35\x90\xe6\x81\x3a\x26\x4c" +
	"\x3c\x28\x52\xbb\x91\xc3\x00\xcb\x88\xd0\x65\x8b\x1b\x53\x2e\xa3" +
	"\x71\x64\x48\x97\xa2\x0d\xf9\x4e\x38\x19\xef\x46\xa9\xde\xac\xd8" +
	"\xa8\xfa\x76\x3f\xe3\x9c\x34\x3f\xf9\xdc\xbb\xc7\xc7\x0b\x4f\x1d" +
	"\x8a\x51\xe0\x4b\xcd\xb4\x59\x31\xc8\x9f\x7e\xc9\xd9\x78\x73\x64" +
	"\xea\xc5\xac\x83\x34\xd3\xeb\xc3\xc5\x81\xa0\xff\xfa\x13\x63\xeb" +
	"\x17\x0d\xdd\x51\xb7\xf0\xda\x49\xd3\x16\x55\x26\x29\xd4\x68\x9e" +
	"\x2b\x16\xbe\x58\x7d\x47\xa1\xfc\x8f\xf8\xb8\xd1\x7a\xd0\x31\xce" +
	"\x45\xcb\x3a\x8f\x95\x16\x04\x28\xaf\xd7\xfb\xca\xbb\x4b\x40\x7e"

func le32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func le64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// xxh64Avalanche is XXH64_avalanche.
func xxh64Avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= xxhPrime64_2
	h ^= h >> 29
	h *= xxhPrime64_3
	h ^= h >> 32
	return h
}

// xxh3Avalanche is XXH3_avalanche.
func xxh3Avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= 0x165667919E3779F9
	h ^= h >> 32
	return h
}

// xxh3RRMXMX is XXH3_rrmxmx.
func xxh3RRMXMX(h, n uint64) uint64 {
	h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
	h *= 0x9FB21C651E98DF25
	h ^= (h >> 35) + n
	h *= 0x9FB21C651E98DF25
	h ^= h >> 28
	return h
}

// mulFold64 is XXH3_mul128_fold64: the 128-bit product's halves xored.
func mulFold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// mix16 is XXH3_mix16B with seed 0.
func mix16(s string, i int, secOff int) uint64 {
	return mulFold64(le64(s, i)^le64(xxh3Secret, secOff), le64(s, i+8)^le64(xxh3Secret, secOff+8))
}

// xxh3Hash64 returns XXH3_64bits(s): seed 0, the default secret.
func xxh3Hash64(s string) uint64 {
	n := len(s)
	switch {
	case n == 0:
		return xxh64Avalanche(le64(xxh3Secret, 56) ^ le64(xxh3Secret, 64))
	case n <= 3:
		c1, c2, c3 := uint32(s[0]), uint32(s[n>>1]), uint32(s[n-1])
		combined := c1<<16 | c2<<24 | c3 | uint32(n)<<8
		bitflip := uint64(le32(xxh3Secret, 0) ^ le32(xxh3Secret, 4))
		return xxh64Avalanche(uint64(combined) ^ bitflip)
	case n <= 8:
		in1, in2 := le32(s, 0), le32(s, n-4)
		bitflip := le64(xxh3Secret, 8) ^ le64(xxh3Secret, 16)
		in64 := uint64(in2) + uint64(in1)<<32
		return xxh3RRMXMX(in64^bitflip, uint64(n))
	case n <= 16:
		lo := le64(s, 0) ^ (le64(xxh3Secret, 24) ^ le64(xxh3Secret, 32))
		hi := le64(s, n-8) ^ (le64(xxh3Secret, 40) ^ le64(xxh3Secret, 48))
		acc := uint64(n) + bits.ReverseBytes64(lo) + hi + mulFold64(lo, hi)
		return xxh3Avalanche(acc)
	case n <= 128:
		acc := uint64(n) * xxhPrime64_1
		if n > 32 {
			if n > 64 {
				if n > 96 {
					acc += mix16(s, 48, 96)
					acc += mix16(s, n-64, 112)
				}
				acc += mix16(s, 32, 64)
				acc += mix16(s, n-48, 80)
			}
			acc += mix16(s, 16, 32)
			acc += mix16(s, n-32, 48)
		}
		acc += mix16(s, 0, 0)
		acc += mix16(s, n-16, 16)
		return xxh3Avalanche(acc)
	case n <= 240:
		acc := uint64(n) * xxhPrime64_1
		for i := 0; i < 8; i++ {
			acc += mix16(s, 16*i, 16*i)
		}
		acc = xxh3Avalanche(acc)
		for i := 8; i < n/16; i++ {
			acc += mix16(s, 16*i, 16*(i-8)+xxh3MidStartOffset)
		}
		acc += mix16(s, n-16, xxh3SecretSizeMin-xxh3MidLastOffset)
		return xxh3Avalanche(acc)
	default:
		return xxh3HashLong(s)
	}
}

// xxh3Accumulate512 is XXH3_accumulate_512 (scalar): one 64-byte stripe of
// s at i, against the secret at secOff.
func xxh3Accumulate512(acc *[8]uint64, s string, i, secOff int) {
	for j := 0; j < 8; j++ {
		v := le64(s, i+8*j)
		k := v ^ le64(xxh3Secret, secOff+8*j)
		acc[j^1] += v
		acc[j] += uint64(uint32(k)) * (k >> 32)
	}
}

// xxh3Scramble is XXH3_scrambleAcc (scalar) with the default secret.
func xxh3Scramble(acc *[8]uint64) {
	const off = len(xxh3Secret) - xxh3StripeLen
	for j := range acc {
		a := acc[j]
		a ^= a >> 47
		a ^= le64(xxh3Secret, off+8*j)
		a *= xxhPrime32_1
		acc[j] = a
	}
}

// xxh3HashLong is XXH3_hashLong_64b for inputs over 240 bytes.
func xxh3HashLong(s string) uint64 {
	const (
		stripesPerBlock = (len(xxh3Secret) - xxh3StripeLen) / xxh3SecretConsume
		blockLen        = xxh3StripeLen * stripesPerBlock
	)
	acc := [8]uint64{
		xxhPrime32_3, xxhPrime64_1, xxhPrime64_2, xxhPrime64_3,
		xxhPrime64_4, xxhPrime32_2, xxhPrime64_5, xxhPrime32_1,
	}
	n := len(s)
	blocks := (n - 1) / blockLen
	for b := 0; b < blocks; b++ {
		for st := 0; st < stripesPerBlock; st++ {
			xxh3Accumulate512(&acc, s, b*blockLen+st*xxh3StripeLen, st*xxh3SecretConsume)
		}
		xxh3Scramble(&acc)
	}
	// The last partial block, then the last stripe (which may overlap it).
	stripes := ((n - 1) - blockLen*blocks) / xxh3StripeLen
	for st := 0; st < stripes; st++ {
		xxh3Accumulate512(&acc, s, blocks*blockLen+st*xxh3StripeLen, st*xxh3SecretConsume)
	}
	xxh3Accumulate512(&acc, s, n-xxh3StripeLen, len(xxh3Secret)-xxh3StripeLen-xxh3SecretLastAcc)

	// XXH3_mergeAccs.
	h := uint64(n) * xxhPrime64_1
	for j := 0; j < 4; j++ {
		off := xxh3SecretMergeStart + 16*j
		h += mulFold64(acc[2*j]^le64(xxh3Secret, off), acc[2*j+1]^le64(xxh3Secret, off+8))
	}
	return xxh3Avalanche(h)
}
