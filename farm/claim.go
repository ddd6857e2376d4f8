package farm

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/offcc/offcc/trust"
)

// A worker claims a job by setting farm:claim:<job> to a claim: its name,
// and, when it has a signing key, that key's ID and its signature of the
// job's ID, the digest of the job entry it read (jobSum) and its name, in
// the trust domain "farm-claim":
//
//	NAME KEYID SIGNATURE(base64)
//
// A client waits only on a claim a worker it trusts signed for the job it
// sent: anyone who can write to the server can set the key, but only a
// trusted worker can make the client wait for it.
const claimDomain = "farm-claim"

// claimMessage is what a claim's signature covers.
func claimMessage(id, sum, worker string) []byte {
	return []byte(id + "\x00" + sum + "\x00" + worker)
}

// makeClaim returns the claim value of worker for the job id whose entry
// has digest sum, signed by k (nil: the worker's name alone).
func makeClaim(k *trust.PrivateKey, id, sum, worker string) string {
	if k == nil {
		return worker
	}
	s := k.Sign(claimDomain, claimMessage(id, sum, worker))
	return worker + " " + s.Key + " " + base64.RawStdEncoding.EncodeToString(s.Sig)
}

// errUnsignedClaim is verifyClaim's error for a claim without a signature.
var errUnsignedClaim = errors.New("unsigned")

// verifyClaim returns the worker named by the claim value v of job id
// (entry digest sum) and, unless insecure, checks that a worker key of r
// signed it. An insecure client believes unsigned claims too.
func verifyClaim(r *trust.Keyring, insecure bool, id, sum, v string) (worker string, err error) {
	f := strings.Fields(v)
	if len(f) == 0 || len(v) > 256 {
		return "", errors.New("malformed")
	}
	worker = f[0]
	if len(f) == 1 {
		if insecure {
			return worker, nil
		}
		return worker, errUnsignedClaim
	}
	if len(f) != 3 {
		return worker, errors.New("malformed")
	}
	sig, derr := base64.RawStdEncoding.DecodeString(f[2])
	if derr != nil {
		return worker, fmt.Errorf("malformed signature: %v", derr)
	}
	if _, err := r.Verify(claimDomain, claimMessage(id, sum, worker), &trust.Signature{Key: f[1], Sig: sig}); err != nil {
		if insecure {
			return worker, nil
		}
		return worker, err
	}
	return worker, nil
}
