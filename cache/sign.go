package cache

import "github.com/offcc/offcc/trust"

// signDomain is the trust domain of entry signatures.
const signDomain = "entry"

// signedBytes returns what an entry's signature covers: the key it is
// stored under, then the SHA-256 of its index without the signature (kind, record, and
// each blob's name, size, SHA-256 and mode), so that neither the entry nor
// its place can change without the signature failing.
func signedBytes(key Sum, e *Entry) []byte {
	c := *e
	c.Signature = nil
	c.Blobs = make([]Blob, len(e.Blobs))
	for i, b := range e.Blobs {
		c.Blobs[i] = Blob{Name: b.Name, Size: b.Size, Sum: b.Sum, Mode: b.Mode & 0o777}
	}
	// Ed25519 hashes its message twice (SHA-512): a job's index is tens of
	// kilobytes, so the signature is over its SHA-256 instead.
	sum := SumBytes(EncodeIndex(&c))
	return append(append(make([]byte, 0, 2*len(sum)), key[:]...), sum[:]...)
}

// SignEntry sets e's signature by k, for key.
func SignEntry(k *trust.PrivateKey, key Sum, e *Entry) {
	e.Signature = k.Sign(signDomain, signedBytes(key, e))
}

// VerifyEntry returns the key of r that signed e for key, or an error
// wrapping trust.ErrUntrusted: e is unsigned, signed by a key r does not
// hold, or changed (or moved to another key) since it was signed.
func VerifyEntry(r *trust.Keyring, key Sum, e *Entry) (*trust.PublicKey, error) {
	return r.Verify(signDomain, signedBytes(key, e), e.Signature)
}
