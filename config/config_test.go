package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeConf writes a configuration file and returns its path.
func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "offcc.conf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustGet(t *testing.T, c *Config, key string) Value {
	t.Helper()
	v, ok := c.Get(key)
	if !ok {
		t.Fatalf("no setting %s", key)
	}
	return v
}

func TestPrecedenceEnvOverFileOverDefault(t *testing.T) {
	p := writeConf(t, "# sizes\ncache_size = 10G\n\ncache_debug = 1\n")
	c, err := Load([]string{"OFFCC_CONFIG=" + p, "OFFCC_CACHE_DEBUG=0", "HOME=/nowhere"})
	if err != nil {
		t.Fatal(err)
	}
	size := mustGet(t, c, "cache_size")
	if size.Value != "10G" || size.Origin.Kind != FromFile || size.Origin.String() != p+":2" {
		t.Errorf("cache_size = %q from %s, want 10G from %s:2", size.Value, size.Origin, p)
	}
	dbg := mustGet(t, c, "OFFCC_CACHE_DEBUG")
	if dbg.Value != "0" || dbg.Origin.String() != "environment" {
		t.Errorf("cache_debug = %q from %s, want 0 from the environment", dbg.Value, dbg.Origin)
	}
	pickup := mustGet(t, c, "remote_exec_pickup")
	if pickup.Value != "2s" || pickup.Origin.String() != "default" {
		t.Errorf("remote_exec_pickup = %q from %s, want 2s by default", pickup.Value, pickup.Origin)
	}
	if got := c.Getenv("OFFCC_CACHE_SIZE"); got != "10G" {
		t.Errorf("Getenv(OFFCC_CACHE_SIZE) = %q, want the file's 10G", got)
	}
	if got := c.Getenv("OFFCC_CACHE_DEBUG"); got != "0" {
		t.Errorf("Getenv(OFFCC_CACHE_DEBUG) = %q, want the environment's 0", got)
	}
	if got := c.Getenv("OFFCC_REMOTE_EXEC_PICKUP"); got != "" {
		t.Errorf("Getenv of a default = %q, want \"\" (the reader's default applies)", got)
	}
	env := c.Environ()
	if !slices.Contains(env, "OFFCC_CACHE_SIZE=10G") || !slices.Contains(env, "OFFCC_CACHE_DEBUG=0") || slices.Contains(env, "OFFCC_CACHE_DEBUG=1") {
		t.Errorf("Environ() = %q: want the file's size added and the environment's debug kept", env)
	}
}

func TestEmptyEnvironmentVariableDoesNotOverride(t *testing.T) {
	p := writeConf(t, "cache_size = 1G\n")
	c, err := Load([]string{"OFFCC_CONFIG=" + p, "OFFCC_CACHE_SIZE="})
	if err != nil {
		t.Fatal(err)
	}
	if v := mustGet(t, c, "cache_size"); v.Origin.Kind != FromFile {
		t.Errorf("cache_size from %s, want the file", v.Origin)
	}
	env := c.Environ()
	if slices.Contains(env, "OFFCC_CACHE_SIZE=") || !slices.Contains(env, "OFFCC_CACHE_SIZE=1G") {
		t.Errorf("Environ() = %q: the empty variable should give way to the file's", env)
	}
}

func TestFileLocations(t *testing.T) {
	home := t.TempDir()
	xdg := t.TempDir()
	conf := filepath.Join(xdg, "offcc", "offcc.conf")
	os.MkdirAll(filepath.Dir(conf), 0o777)
	os.WriteFile(conf, []byte("cache = readonly\n"), 0o644)
	c, err := Load([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + xdg})
	if err != nil || c.File != conf || !c.FileFound || mustGet(t, c, "cache").Value != "readonly" {
		t.Errorf("XDG: file %s found %v (err %v), want %s read", c.File, c.FileFound, err, conf)
	}
	c, err = Load([]string{"HOME=" + home})
	if err != nil || c.File != filepath.Join(home, ".config", "offcc", "offcc.conf") || c.FileFound {
		t.Errorf("HOME: file %s found %v err %v: want the missing default, no error", c.File, c.FileFound, err)
	}
	_, err = Load([]string{"HOME=" + home, "OFFCC_CONFIG=" + filepath.Join(home, "missing.conf")})
	if err == nil || !strings.Contains(err.Error(), "OFFCC_CONFIG=") || !strings.Contains(err.Error(), "missing.conf") {
		t.Errorf("a missing OFFCC_CONFIG file: err %v, want one naming it", err)
	}
}

func TestFileErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"cache_sise = 1G\n", ":1: unknown setting 'cache_sise'; did you mean 'cache_size'?"},
		{"\nOFFCC_CACHE_SIZE = 1G\n", ":2: unknown setting 'OFFCC_CACHE_SIZE'; did you mean 'cache_size'?"},
		{"# c\njust words\n", ":2: not a setting"},
		{"zzzzzzzzzzzz = 1\n", ":1: unknown setting 'zzzzzzzzzzzz'"},
	} {
		p := writeConf(t, tc.text)
		_, err := Load([]string{"OFFCC_CONFIG=" + p})
		if err == nil || !strings.Contains(err.Error(), p+tc.want) {
			t.Errorf("%q: err %v, want %q", tc.text, err, p+tc.want)
		}
		if err != nil && strings.Contains(tc.text, "zzz") && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%q: %v: nothing is close", tc.text, err)
		}
	}
}

func TestBadValuesNameSettingOriginAndExample(t *testing.T) {
	for _, tc := range []struct {
		key, value, want string
	}{
		{"cache_size", "garbage", "not a size; use a number of bytes with an optional K, M, G or T suffix, such as 10G"},
		{"cache_debug", "maybe", "not a boolean; use 0 or 1 (also off/on, no/yes, false/true), such as 1"},
		{"remote_exec_pickup", "soon", "not a duration; use a positive number with a unit (ms, s, m or h), such as 2s"},
		{"remote_exec_pickup", "-1s", "not a duration"},
		{"cache", "sometimes", "not one of 1, 0, readonly; use one of them, such as readonly"},
		{"progress", "2", "not one of auto, 0, 1"},
		{"remote_cache", "http://host:6379", "not a redis:// URL; use redis://[user:password@]host:port[/db]"},
		{"remote_exec", "redis://", "no host in the URL"},
		{"remote_cache", "redis://h:6379/x", "not a database number"},
		{"cache_dir", "relative/dir", "a relative path in the configuration file; use an absolute path"},
	} {
		s, _ := Lookup(tc.key)
		p := writeConf(t, "\n"+tc.key+" = "+tc.value+"\n")
		_, err := Load([]string{"OFFCC_CONFIG=" + p})
		wantFile := tc.key + ` = "` + tc.value + `" (from ` + p + `:2): ` + tc.want
		if err == nil || !strings.HasPrefix(err.Error(), wantFile) {
			t.Errorf("file %s = %s: err %v, want %q", tc.key, tc.value, err, wantFile)
		}
		if tc.key == "cache_dir" {
			continue // relative paths are fine in the environment
		}
		_, err = Load([]string{s.Env + "=" + tc.value})
		wantEnv := s.Env + "=" + tc.value + " (from the environment): " + tc.want
		if err == nil || !strings.HasPrefix(err.Error(), wantEnv) {
			t.Errorf("env %s=%s: err %v, want %q", s.Env, tc.value, err, wantEnv)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: not one line", err)
		}
	}
}

func TestGoodValuesOfEveryKind(t *testing.T) {
	env := []string{
		"OFFCC_CACHE_SIZE=0", "OFFCC_CACHE_DEBUG=on", "OFFCC_REMOTE_EXEC_PICKUP=500ms", "OFFCC_CACHE=ro",
		"OFFCC_REMOTE_CACHE=redis://u:p@h:6379/2|readonly", "OFFCC_REMOTE_EXEC=rediss://h", "OFFCC_CACHE_DIR=rel",
		"OFFCC_TRUSTED_CACHE_KEYS=a.pub:b", "OFFCC_SANDBOX_DISABLE=bwrap", "OFFCC_PROGRESS=auto",
	}
	c, err := Load(env)
	if err != nil {
		t.Fatalf("Load(%q): %v", env, err)
	}
	if len(c.Problems()) != 0 {
		t.Errorf("problems: %v", c.Problems())
	}
}

func TestEveryKindIsChecked(t *testing.T) {
	// A kind Check lets everything through must be one that takes any
	// text; the others reject garbage.
	free := map[Kind]bool{String: true, KeyList: true, Path: true}
	for _, s := range All() {
		if free[s.Kind] {
			continue
		}
		if Check(s, "\x01garbage", false) == "" {
			t.Errorf("%s: garbage passes", s.Key)
		}
		if s.Default != "" && Check(s, s.Default, true) != "" {
			t.Errorf("%s: its default %q is bad: %s", s.Key, s.Default, Check(s, s.Default, true))
		}
	}
}

func TestHomeExpansionInFile(t *testing.T) {
	p := writeConf(t, "cache_dir = ~/c\ntrusted_workers = ~/a.pub,~/b.pub\n")
	c, err := Load([]string{"OFFCC_CONFIG=" + p, "HOME=/h"})
	if err != nil {
		t.Fatal(err)
	}
	if v := mustGet(t, c, "cache_dir").Value; v != "/h/c" {
		t.Errorf("cache_dir = %q, want /h/c", v)
	}
	if v := mustGet(t, c, "trusted_workers").Value; v != "/h/a.pub,/h/b.pub" {
		t.Errorf("trusted_workers = %q", v)
	}
}

func TestLaterLineWins(t *testing.T) {
	p := writeConf(t, "cache_size = 1G\ncache_size = 2G\n")
	c, _ := Load([]string{"OFFCC_CONFIG=" + p})
	if v := mustGet(t, c, "cache_size"); v.Value != "2G" || v.Origin.Line != 2 {
		t.Errorf("cache_size = %q from line %d, want 2G from line 2", v.Value, v.Origin.Line)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "10G": 10 << 30, "1.5K": 1536, "3MiB": 3 << 20, "7": 7, "2t": 2 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "garbage", "-1", "NaN", "1X", "inf"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeds", in)
		}
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "3600s": time.Hour, "0s": 0, " 1d ": 24 * time.Hour} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "7", "d", "7h", "-1d", "+1d", "1.5d", "7 d", "99999999999999999999d", "200000d"} {
		if _, err := ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) succeeds", in)
		}
	}
}

func TestSetAndUnsetKeepComments(t *testing.T) {
	p := writeConf(t, "# my settings\ncache_size = 1G   \n# keep me\ncache_debug = 1\ncache_size = 3G\n")
	if err := SetInFile(p, "OFFCC_CACHE_SIZE", "10G"); err != nil {
		t.Fatal(err)
	}
	if err := SetInFile(p, "remote_exec_pickup", "5s"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	want := "# my settings\ncache_size = 10G\n# keep me\ncache_debug = 1\nremote_exec_pickup = 5s\n"
	if string(got) != want {
		t.Errorf("after set:\n%s\nwant:\n%s", got, want)
	}
	removed, err := UnsetInFile(p, "cache_debug")
	if err != nil || !removed {
		t.Fatalf("unset: %v %v", removed, err)
	}
	removed, err = UnsetInFile(p, "cache_debug")
	if err != nil || removed {
		t.Errorf("second unset: removed %v, err %v; want nothing removed", removed, err)
	}
	got, _ = os.ReadFile(p)
	want = "# my settings\ncache_size = 10G\n# keep me\nremote_exec_pickup = 5s\n"
	if string(got) != want {
		t.Errorf("after unset:\n%s\nwant:\n%s", got, want)
	}
	c, err := Load([]string{"OFFCC_CONFIG=" + p})
	if err != nil || mustGet(t, c, "cache_size").Value != "10G" {
		t.Errorf("reloaded: %v", err)
	}
}

func TestUnsetUnknownKey(t *testing.T) {
	p := writeConf(t, "# mine\ncache_size = 1G\nold_setting = 3\n  old_setting=4\nold_settings = 5\n")
	if _, err := Load([]string{"OFFCC_CONFIG=" + p}); err == nil {
		t.Fatal("a file with an unknown key loads")
	}
	// Its lines go, and only its.
	if removed, err := UnsetInFile(p, "old_setting"); err != nil || !removed {
		t.Errorf("unset old_setting: %v, %v", removed, err)
	}
	if got, _ := os.ReadFile(p); string(got) != "# mine\ncache_size = 1G\nold_settings = 5\n" {
		t.Errorf("after unset: %q", got)
	}
	// Absent: an error with the nearest setting, the file unchanged.
	if _, err := UnsetInFile(p, "cache_sise"); err == nil || !strings.Contains(err.Error(), "did you mean 'cache_size'") {
		t.Errorf("unset of an absent unknown key: %v", err)
	}
	if _, err := UnsetInFile(filepath.Join(t.TempDir(), "none.conf"), "cache_sise"); err == nil {
		t.Errorf("unset of an unknown key without a file succeeds")
	}
	if removed, err := UnsetInFile(p, "old_settings"); err != nil || !removed {
		t.Errorf("unset old_settings: %v, %v", removed, err)
	}
	if _, err := Load([]string{"OFFCC_CONFIG=" + p}); err != nil {
		t.Errorf("after the unsets: %v", err)
	}
}

func TestSetRejectsBadValueAndLeavesFile(t *testing.T) {
	p := writeConf(t, "cache_size = 1G\n")
	err := SetInFile(p, "cache_size", "lots")
	if err == nil || !strings.Contains(err.Error(), `cache_size = "lots"`) || !strings.Contains(err.Error(), "such as 10G") {
		t.Errorf("err %v", err)
	}
	if err := SetInFile(p, "cache_sise", "1G"); err == nil || !strings.Contains(err.Error(), "did you mean 'cache_size'") {
		t.Errorf("unknown key: err %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "cache_size = 1G\n" {
		t.Errorf("file changed: %q", got)
	}
}

func TestSetCreatesFileAndDirectoryAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "offcc.conf")
	if err := SetInFile(p, "cache_size", "10G"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "cache_size = 10G\n" {
		t.Errorf("new file: %q", got)
	}
	// The old file is replaced whole, by rename: one opened before the
	// edit still reads the old content, and no temporary is left.
	os.Chmod(p, 0o600)
	old, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := SetInFile(p, "cache_size", "20G"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(old.Name()); string(data) != "cache_size = 20G\n" {
		t.Errorf("after edit: %q", data)
	}
	buf := make([]byte, 100)
	n, _ := old.Read(buf)
	if string(buf[:n]) != "cache_size = 10G\n" {
		t.Errorf("a reader of the old file sees %q: the file was rewritten in place", buf[:n])
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's 0600 kept", info.Mode().Perm())
	}
}

func TestEnvironLeavesOutBooleansOffByDefault(t *testing.T) {
	p := writeConf(t, "trace = 0\nplan_cache = 0\ncache_debug = yes\n")
	c, err := Load([]string{"OFFCC_CONFIG=" + p})
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(c.Environ(), " ")
	if strings.Contains(env, "OFFCC_TRACE") || !strings.Contains(env, "OFFCC_PLAN_CACHE=0") || !strings.Contains(env, "OFFCC_CACHE_DEBUG=yes") {
		t.Errorf("Environ() = %s: want trace left out (off by default), plan_cache=0 and cache_debug=yes passed on", env)
	}
}
