package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/trust"
)

// runKey runs "offcc key ARGS..." and returns its status, stdout and
// stderr.
func runKey(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	rc := keyRun(args, &stdout, &stderr)
	return rc, stdout.String(), stderr.String()
}

// genKeyPair writes a key pair NAME.key, NAME.pub in dir with "offcc key
// generate" and returns their paths.
func genKeyPair(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	if rc, _, errs := runKey(t, "generate", name, "--dir", dir); rc != 0 || errs != "" {
		t.Fatalf("key generate: status %d, stderr %q", rc, errs)
	}
	return filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
}

func TestKeyIsSubcommand(t *testing.T) {
	if !isSubcommand("key") {
		t.Errorf("key is not a subcommand")
	}
}

// TestKeyGenerate: the pair is written (private 0600), loads, and the
// output names both files, the ID and the variables to set.
func TestKeyGenerate(t *testing.T) {
	dir := t.TempDir()
	rc, out, errs := runKey(t, "generate", "ci-cache", "--dir", dir)
	if rc != 0 || errs != "" {
		t.Fatalf("status %d, stderr %q", rc, errs)
	}
	keyPath, pubPath := filepath.Join(dir, "ci-cache.key"), filepath.Join(dir, "ci-cache.pub")
	fi, err := os.Stat(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %04o", fi.Mode().Perm())
	}
	priv, err := trust.LoadPrivateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := trust.LoadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if priv.ID != pub.ID || pub.Name != "ci-cache" {
		t.Errorf("private %s, public %s %s", priv.ID, pub.Name, pub.ID)
	}
	for _, want := range []string{keyPath, pubPath, "ID " + pub.ID, "OFFCC_SIGNING_KEY=" + keyPath,
		"OFFCC_TRUSTED_CACHE_KEYS=" + pubPath, "OFFCC_TRUSTED_WORKERS=" + pubPath, "OFFCC_TRUSTED_CLIENTS=" + pubPath} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Never overwritten.
	before, _ := os.ReadFile(keyPath)
	rc, out, errs = runKey(t, "generate", "--dir="+dir, "ci-cache")
	if rc != 1 || out != "" || !strings.HasPrefix(errs, "offcc: error: key generate: ") || !strings.Contains(errs, "exists") || strings.Count(errs, "\n") != 1 {
		t.Errorf("generate over an existing pair: %d %q %q", rc, out, errs)
	}
	if after, _ := os.ReadFile(keyPath); !bytes.Equal(before, after) {
		t.Errorf("the private key was overwritten")
	}

	// The current directory by default.
	here := t.TempDir()
	t.Chdir(here)
	if rc, _, errs := runKey(t, "generate", "dev"); rc != 0 {
		t.Fatalf("generate in the current directory: %s", errs)
	}
	if _, err := os.Stat(filepath.Join(here, "dev.key")); err != nil {
		t.Error(err)
	}
}

// TestKeyShow: a public and a private key file are shown with their name
// and ID; a readable private key is refused.
func TestKeyShow(t *testing.T) {
	dir := t.TempDir()
	keyPath, pubPath := genKeyPair(t, dir, "ci")
	pub, _ := trust.LoadPublicKey(pubPath)
	for path, kind := range map[string]string{pubPath: "public", keyPath: "private"} {
		rc, out, errs := runKey(t, "show", path)
		if rc != 0 || errs != "" || !strings.Contains(out, "name  ci\n") || !strings.Contains(out, "id    "+pub.ID+"\n") || !strings.Contains(out, "kind  "+kind) {
			t.Errorf("show %s: %d %q %q", path, rc, out, errs)
		}
	}
	os.Chmod(keyPath, 0o644)
	if rc, _, errs := runKey(t, "show", keyPath); rc != 1 || !strings.Contains(errs, "chmod 600") {
		t.Errorf("show of a readable private key: %d %q", rc, errs)
	}
}

func TestKeyUsageErrors(t *testing.T) {
	rc, out, errs := runKey(t)
	if rc != 1 || out != "" || !strings.Contains(errs, "USAGE: offcc key") {
		t.Errorf("no arguments: %d %q %q", rc, out, errs)
	}
	for _, help := range []string{"--help", "-h", "help"} {
		rc, out, errs := runKey(t, help)
		if rc != 0 || errs != "" || !strings.Contains(out, "USAGE: offcc key") || !strings.Contains(out, "OFFCC_TRUSTED_CACHE_KEYS") {
			t.Errorf("%s: %d %q %q", help, rc, out, errs)
		}
	}
	for _, sub := range []string{"generate", "show"} {
		rc, out, errs := runKey(t, sub, "--help")
		if rc != 0 || errs != "" || !strings.HasPrefix(out, "USAGE: offcc key "+sub) {
			t.Errorf("%s --help: %d %q %q", sub, rc, out, errs)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, b := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, "unknown key subcommand 'bogus'"},
		{[]string{"generate"}, "key generate: want one key name (usage: offcc key generate NAME [--dir DIR])"},
		{[]string{"generate", "a", "b"}, "want one key name"},
		{[]string{"generate", "a", "--bogus"}, "unknown argument '--bogus'"},
		{[]string{"generate", "a", "--dir"}, "option '--dir' needs a value"},
		{[]string{"generate", "a", "--dir="}, "--dir needs a directory"},
		{[]string{"generate", "a", "--dir", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"generate", "a", "--dir", file}, "not a directory"},
		{[]string{"generate", "../a", "--dir", dir}, "bad key name"},
		{[]string{"generate", "a b", "--dir", dir}, "bad key name"},
		{[]string{"show"}, "want one key file"},
		{[]string{"show", filepath.Join(dir, "missing.pub")}, "no such file"},
		{[]string{"show", file}, "not an offcc key file"},
		// Misspellings get clang's "did you mean".
		{[]string{"genrate", "a"}, "unknown key subcommand 'genrate'; did you mean 'generate'?\n"},
		{[]string{"generate", "a", "--dirr", dir}, "key generate: unknown argument '--dirr'; did you mean '--dir'?\n"},
		{[]string{"generate", "a", "-dir=" + dir}, "unknown argument '-dir=" + dir + "'; did you mean '--dir=" + dir + "'?\n"},
		{[]string{"show", "--dir", file}, "key show: unknown argument '--dir' (usage: offcc key show FILE)\n"},
	} {
		rc, out, errs := runKey(t, b.args...)
		if rc != 1 || out != "" || !strings.HasPrefix(errs, "offcc: error: ") || !strings.Contains(errs, b.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want one error line saying %q", b.args, rc, out, errs, b.want)
		}
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("failed generates left files: %v", names)
	}
}
