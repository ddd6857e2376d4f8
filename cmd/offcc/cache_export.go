package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/trust"
)

// cacheExport runs "offcc cache export (--all | KEY...) -o FILE": the
// entries to a poclbin archive, signed with OFFCC_SIGNING_KEY if set.
func cacheExport(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("export", args, []string{"--all"}, []string{"-o", "--output"})
	if err != nil {
		return err
	}
	out, ok := ca.values["-o"]
	if v, ok2 := ca.values["--output"]; ok2 {
		out, ok = v, true
	}
	if !ok || out == "" {
		return &usageError{"export", "no output file (-o FILE.poclbin)"}
	}
	all := ca.bools["--all"]
	if all == (len(ca.operands) > 0) {
		return &usageError{"export", "give --all or keys, not both or neither"}
	}
	var keys []cache.Sum
	if !all {
		keys = []cache.Sum{}
		for _, k := range ca.operands {
			s, err := cache.ParseSum(strings.TrimSpace(k))
			if err != nil {
				return &usageError{"export", fmt.Sprintf("key '%s': want 64 lower-case hex digits", k)}
			}
			keys = append(keys, s)
		}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	// Only the signing key is read: a bad setting of another key
	// variable is none of export's business.
	signed := ""
	if p := strings.TrimSpace(env.getenv(trust.EnvSigningKey)); p != "" {
		k, err := trust.LoadPrivateKey(p)
		if err != nil {
			return fmt.Errorf("%s: %v", trust.EnvSigningKey, err)
		}
		c.Keys = &trust.Settings{SigningKey: k}
		signed = fmt.Sprintf(", signed by %s (%s)", k.Name, k.ID)
	} else {
		signed = " (not signed: no " + trust.EnvSigningKey + ")"
	}
	var n int
	if out == "-" {
		n, err = c.Export(env.stdout, keys)
	} else {
		err = atomicfile.WriteFunc(out, 0o666, func(w io.Writer) error {
			var werr error
			n, werr = c.Export(w, keys)
			return werr
		})
	}
	if err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintf(env.stderr, "offcc: exported %d entries to %s%s\n", n, out, signed)
	}
	return nil
}
