package syclbin

import "fmt"

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// base64Index maps a character to its 6-bit value, or -1.
var base64Index = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(base64Alphabet); i++ {
		t[base64Alphabet[i]] = int8(i)
	}
	return t
}()

// EncodedBase64Len is the length of EncodeBase64's output for n input bytes:
// ceil(8n/6).
func EncodedBase64Len(n int) int { return (n*8 + 5) / 6 }

// EncodeBase64 encodes src with LLVM's Base64 variant (llvm/Support/Base64.cpp
// as used by PropertySetIO): the standard alphabet, but bits are taken least
// significant first and there is no padding, so the result has
// ceil(8·len(src)/6) characters. It is not RFC 4648 Base64.
func EncodeBase64(src []byte) string {
	out := make([]byte, 0, EncodedBase64Len(len(src)))
	i := 0
	for ; i+3 <= len(src); i += 3 {
		b0, b1, b2 := src[i], src[i+1], src[i+2]
		out = append(out,
			base64Alphabet[b0&0x3f],
			base64Alphabet[(b0>>6|b1<<2)&0x3f],
			base64Alphabet[(b1>>4|b2<<4)&0x3f],
			base64Alphabet[b2>>2])
	}
	switch len(src) - i {
	case 1:
		b0 := src[i]
		out = append(out, base64Alphabet[b0&0x3f], base64Alphabet[b0>>6])
	case 2:
		b0, b1 := src[i], src[i+1]
		out = append(out,
			base64Alphabet[b0&0x3f],
			base64Alphabet[(b0>>6|b1<<2)&0x3f],
			base64Alphabet[b1>>4])
	}
	return string(out)
}

// Base64Error reports an invalid string given to DecodeBase64.
type Base64Error struct {
	Offset int    // offset of the offending character in the encoded string
	Reason string // what is wrong
}

func (e *Base64Error) Error() string {
	return fmt.Sprintf("SYCL Base64 at offset %d: %s", e.Offset, e.Reason)
}

// DecodeBase64 reverses EncodeBase64. Each group of four characters gives
// three bytes; a two-character tail gives one byte and a three-character
// tail two. A one-character tail and any character outside the alphabet are
// errors. Like LLVM, bits beyond the last whole byte of a tail are ignored.
func DecodeBase64(s string) ([]byte, error) {
	if len(s)%4 == 1 {
		return nil, &Base64Error{Offset: len(s) - 1, Reason: "invalid encoded length (one-character tail)"}
	}
	for i := 0; i < len(s); i++ {
		if base64Index[s[i]] < 0 {
			return nil, &Base64Error{Offset: i, Reason: fmt.Sprintf("invalid character %q", s[i])}
		}
	}
	out := make([]byte, 0, len(s)*3/4)
	i := 0
	for ; i+4 <= len(s); i += 4 {
		c0, c1, c2, c3 := byte(base64Index[s[i]]), byte(base64Index[s[i+1]]), byte(base64Index[s[i+2]]), byte(base64Index[s[i+3]])
		out = append(out, c0|c1<<6, c1>>2|c2<<4, c2>>4|c3<<2)
	}
	switch len(s) - i {
	case 2:
		c0, c1 := byte(base64Index[s[i]]), byte(base64Index[s[i+1]])
		out = append(out, c0|c1<<6)
	case 3:
		c0, c1, c2 := byte(base64Index[s[i]]), byte(base64Index[s[i+1]]), byte(base64Index[s[i+2]])
		out = append(out, c0|c1<<6, c1>>2|c2<<4)
	}
	return out, nil
}
