package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/offcc/offcc/config"
	"github.com/offcc/offcc/trust"
)

const keyUsage = `USAGE: offcc key <subcommand> [options]

Make and show offcc's signing keys (Ed25519): a writer signs what it
stores with its private key; readers trust its public key.

SUBCOMMANDS:
  generate NAME [--dir DIR]    write a new key pair: DIR/NAME.key (the private
                               key, mode 0600: keep it secret) and DIR/NAME.pub
                               (the public key, for readers); DIR defaults to
                               the current directory. Existing files are never
                               overwritten. NAME: letters, digits, '.', '_',
                               '-' and '@'
  show FILE                    print a key file's name, ID and kind

Where keys are used:
  OFFCC_SIGNING_KEY=NAME.key        the key a process signs with: the shared
                                    cache's writer (CI), offcc cache export,
                                    a build farm client or worker
  OFFCC_TRUSTED_CACHE_KEYS=LIST     public keys whose shared-cache entries
                                    and exported archives are believed
  OFFCC_TRUSTED_WORKERS=LIST        public keys whose farm results a client
                                    believes
  OFFCC_TRUSTED_CLIENTS=LIST        public keys whose jobs a farm worker runs
A LIST is NAME.pub files or directories of them, separated by ':' or ','.
`

// keySubcommands are the usage lines of each subcommand.
var keySubcommands = map[string]string{
	"generate": "offcc key generate NAME [--dir DIR]",
	"show":     "offcc key show FILE",
}

// keyFlags are each subcommand's options; each takes a value ("--dir
// DIR" or "--dir=DIR").
var keyFlags = map[string][]string{
	"generate": {"--dir"},
	"show":     nil,
}

// unknownKeyFlag returns the first argument of args before "--" that is
// an option ("-x", "--x", "--x=v") none of flags names, "" when there is
// none. An option of flags given without "=" takes the next argument.
func unknownKeyFlag(args []string, flags []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, eq := strings.Cut(a, "=")
		if !slices.Contains(flags, name) {
			return a
		}
		if !eq {
			i++
		}
	}
	return ""
}

func keyMain(_ context.Context, args []string, _ *config.Config) int {
	return keyRun(args, os.Stdout, os.Stderr)
}

// keyRun runs "offcc key ARGS...", returning the exit status.
func keyRun(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, keyUsage)
		return 1
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, keyUsage)
		return 0
	}
	usage, ok := keySubcommands[sub]
	if !ok {
		fmt.Fprintf(stderr, "offcc: error: %s\n", unknownSubcommand("key", sub, []string{"generate", "show"}))
		return 1
	}
	for _, a := range rest {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintf(stdout, "USAGE: %s\n", usage)
			return 0
		}
		if a == "--" {
			break
		}
	}
	if bad := unknownKeyFlag(rest, keyFlags[sub]); bad != "" {
		msg := unknownArgument(bad, keyFlags[sub])
		if !strings.Contains(msg, "did you mean") {
			msg += " (usage: " + usage + ")"
		}
		fmt.Fprintf(stderr, "offcc: error: key %s: %s\n", sub, msg)
		return 1
	}
	var err error
	switch sub {
	case "generate":
		err = keyGenerate(rest, stdout)
	case "show":
		err = keyShow(rest, stdout)
	}
	if err != nil {
		if ue, ok := err.(*usageError); ok {
			fmt.Fprintf(stderr, "offcc: error: key %s: %s (usage: %s)\n", sub, ue.msg, usage)
		} else {
			fmt.Fprintf(stderr, "offcc: error: key %s: %s\n", sub, oneLine(err.Error()))
		}
		return 1
	}
	return 0
}

func keyGenerate(args []string, stdout io.Writer) error {
	ca, err := parseCacheArgs("generate", args, nil, []string{"--dir"})
	if err != nil {
		return err
	}
	if len(ca.operands) != 1 {
		return &usageError{"generate", "want one key name"}
	}
	name := ca.operands[0]
	dir, ok := ca.values["--dir"]
	if !ok {
		dir = "."
	}
	if dir == "" {
		return &usageError{"generate", "--dir needs a directory"}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if info, err := os.Stat(dir); err != nil {
		return err
	} else if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	k, err := trust.Generate(name)
	if err != nil {
		return err
	}
	keyPath, pubPath, err := trust.WriteKeyPair(filepath.Join(dir, name), k)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "private key  %s (mode 0600: keep it secret, give it only to the writer)\n", keyPath)
	fmt.Fprintf(stdout, "public key   %s\n", pubPath)
	fmt.Fprintf(stdout, "key          %s, ID %s\n", k.Name, k.ID)
	fmt.Fprintf(stdout, "\nThe writer (a CI runner filling the shared cache, offcc cache export, a farm client or worker) signs with:\n")
	fmt.Fprintf(stdout, "  export %s=%s\n", trust.EnvSigningKey, keyPath)
	fmt.Fprintf(stdout, "Readers trust it with one of (lists of files or directories, separated by ':' or ','):\n")
	fmt.Fprintf(stdout, "  export %s=%s   # shared cache entries, cache import\n", trust.EnvCacheWriters, pubPath)
	fmt.Fprintf(stdout, "  export %s=%s      # build farm: the results a client believes\n", trust.EnvWorkers, pubPath)
	fmt.Fprintf(stdout, "  export %s=%s      # build farm: the jobs a worker runs\n", trust.EnvClients, pubPath)
	return nil
}

func keyShow(args []string, stdout io.Writer) error {
	ca, err := parseCacheArgs("show", args, nil, nil)
	if err != nil {
		return err
	}
	if len(ca.operands) != 1 {
		return &usageError{"show", "want one key file"}
	}
	path := ca.operands[0]
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	f.Close()
	kind := "public"
	var pub *trust.PublicKey
	if tag, _, _ := strings.Cut(strings.TrimSpace(string(head[:n])), " "); tag == "offcc-ed25519-private" {
		k, err := trust.LoadPrivateKey(path)
		if err != nil {
			return err
		}
		kind, pub = "private (signs; keep it secret)", &k.PublicKey
	} else {
		if pub, err = trust.LoadPublicKey(path); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "file  %s\nname  %s\nid    %s\nkind  %s\n", path, pub.Name, pub.ID, kind)
	return nil
}
