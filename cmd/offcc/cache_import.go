package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/poclbin"
	"github.com/offcc/offcc/trust"
)

// maxImportSize bounds the archive import reads: the largest archive
// ParseArchive accepts.
const maxImportSize = 15 + poclbin.MaxPathLen + poclbin.MaxEntries*(8+poclbin.MaxPathLen) + poclbin.MaxTotalSize

// cacheImport runs "offcc cache import [--trust-archive] FILE": an
// archive's entries into the cache, each checked before any is written.
func cacheImport(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("import", args, []string{"--trust-archive"}, nil)
	if err != nil {
		return err
	}
	if len(ca.operands) != 1 {
		return &usageError{"import", "want one archive"}
	}
	name := ca.operands[0]
	var r io.Reader = env.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return &plainError{fmt.Sprintf("%s: %v", name, err)}
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > maxImportSize {
			return fmt.Errorf("%s: %d bytes, larger than any poclbin archive", name, info.Size())
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxImportSize+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > maxImportSize {
		return fmt.Errorf("%s: larger than any poclbin archive", name)
	}
	if _, err := poclbin.ParseArchive(data); err != nil {
		shown := name
		if name == "-" {
			shown = "standard input"
		}
		why := strings.TrimPrefix(strings.TrimPrefix(oneLine(err.Error()), "poclbin archive: "), "poclbin: ")
		return &plainError{fmt.Sprintf("%s: not an offcc cache archive (%s)", shown, why)}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	opt := cache.ImportOptions{TrustArchive: ca.bools["--trust-archive"]}
	if !opt.TrustArchive {
		// Only the trusted cache keys are read: a bad setting of
		// another key variable is none of import's business.
		ring, err := trust.LoadKeyring(env.getenv(trust.EnvCacheWriters))
		if err != nil {
			return fmt.Errorf("%s: %v", trust.EnvCacheWriters, err)
		}
		c.Keys = &trust.Settings{CacheWriters: ring}
	}
	res, err := c.Import(data, opt)
	if err != nil {
		return err
	}
	unchecked := ""
	if opt.TrustArchive {
		unchecked = " (signatures not checked: --trust-archive)"
	}
	fmt.Fprintf(env.stderr, "offcc: imported %d entries into %s%s%s\n", res.Imported, filepath.Clean(c.Dir), skippedText(res), unchecked)
	return nil
}

// skippedText says which entries an import skipped and why ("" for none).
func skippedText(res cache.ImportResult) string {
	var parts []string
	if n := res.Skipped[cache.KindPlan]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d plan (plans are derived again, never imported)", n))
	}
	if n := res.Skipped[cache.KindTool] + res.Skipped[cache.KindLast]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d machine-local (tool digests, last-stored keys: of use only where they were made)", n))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("; skipped %d: %s", res.SkippedTotal(), strings.Join(parts, ", "))
}
