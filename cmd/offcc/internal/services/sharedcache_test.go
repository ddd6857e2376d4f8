package services

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/driver"
	"github.com/offcc/offcc/trust"
)

// TestSharedCacheTrust: the shared cache is opened only with trusted
// keys (or OFFCC_REMOTE_CACHE_INSECURE=1); a bad key setting or no trusted
// keys is one warning and the local cache goes on, never an error.
func TestSharedCacheTrust(t *testing.T) {
	dir := t.TempDir()
	k, err := trust.Generate("ci")
	if err != nil {
		t.Fatal(err)
	}
	keyFile, pubFile, err := trust.WriteKeyPair(filepath.Join(dir, "ci"), k)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing listens on port 1: Open does not dial, so the store opens.
	url := "redis://127.0.0.1:1"
	for _, tc := range []struct {
		name   string
		env    []string
		remote bool
		warn   string
	}{
		{"trusted keys", []string{"OFFCC_TRUSTED_CACHE_KEYS=" + pubFile, "OFFCC_SIGNING_KEY=" + keyFile}, true, ""},
		{"insecure", []string{"OFFCC_REMOTE_CACHE_INSECURE=1"}, true, ""},
		{"no trusted keys", nil, false,
			"offcc: warning: shared cache " + url + ": no trusted keys (OFFCC_TRUSTED_CACHE_KEYS) and not marked insecure (OFFCC_REMOTE_CACHE_INSECURE=1); using the local cache only\n"},
		{"bad trusted keys", []string{"OFFCC_TRUSTED_CACHE_KEYS=" + filepath.Join(dir, "missing.pub")}, false,
			"offcc: warning: shared cache " + url + ": OFFCC_TRUSTED_CACHE_KEYS: "},
		{"bad signing key", []string{"OFFCC_TRUSTED_CACHE_KEYS=" + pubFile, "OFFCC_SIGNING_KEY=" + pubFile}, false,
			"offcc: warning: shared cache " + url + ": OFFCC_SIGNING_KEY: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			env := append([]string{"OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache"), "OFFCC_REMOTE_CACHE=" + url}, tc.env...)
			getenv := func(key string) string {
				for _, kv := range env {
					if v, ok := strings.CutPrefix(kv, key+"="); ok {
						return v
					}
				}
				return ""
			}
			cfg, err := cache.ConfigFromEnv(getenv)
			c := cache.Open(cfg)
			if err != nil || c == nil {
				t.Fatalf("cache.Open: %v, %v", c, err)
			}
			New().SharedCache(driver.ServiceEnv{Prog: "offcc", Getenv: getenv,
				Warn: func(msg string) { stderr.WriteString("offcc: warning: " + msg + "\n") }}, c, cfg)
			if (c.Remote != nil) != tc.remote {
				t.Errorf("shared store %v, want one: %v", c.Remote, tc.remote)
			}
			if c.Remote != nil {
				if cl, ok := c.Remote.(interface{ Close() error }); ok {
					cl.Close()
				}
			}
			if got := stderr.String(); tc.warn == "" && got != "" || !strings.HasPrefix(got, tc.warn) || strings.Count(got, "\n") > 1 {
				t.Errorf("stderr %q, want %q", got, tc.warn)
			}
			if tc.name == "trusted keys" && (c.Keys == nil || c.Keys.SigningKey == nil || c.Keys.CacheWriters.Len() != 1) {
				t.Errorf("keys %+v", c.Keys)
			}
		})
	}
}
