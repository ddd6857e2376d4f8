package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/internal/editdist"
)

// OriginKind says where a setting's value comes from.
type OriginKind int

// The origins, weakest first.
const (
	// FromDefault is the setting's default.
	FromDefault OriginKind = iota
	// FromFile is a line of the configuration file.
	FromFile
	// FromEnv is the environment variable.
	FromEnv
)

// Origin is where a value comes from: its kind and, for the file, the file
// and line.
type Origin struct {
	Kind OriginKind
	File string
	Line int
}

// String is the origin as "offcc config" shows it: "default",
// "FILE:LINE" or "environment".
func (o Origin) String() string {
	switch o.Kind {
	case FromFile:
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	case FromEnv:
		return "environment"
	}
	return "default"
}

// Value is a setting's value in force and where it comes from.
type Value struct {
	Setting
	// Value is the value ("" when unset); Origin says where it comes from.
	Value  string
	Origin Origin
	// Err is the value's problem (a *ValueError), nil when it is good.
	Err error
}

// ValueError is a bad value: its message names the setting, its origin
// and an example of a good value.
type ValueError struct {
	Setting Setting
	Value   string
	Origin  Origin
	// Why says what is wrong and what would do ("not a size; use ...").
	Why string
}

func (e *ValueError) Error() string {
	switch e.Origin.Kind {
	case FromEnv:
		return fmt.Sprintf("%s=%s (from the environment): %s", e.Setting.Env, e.Value, e.Why)
	case FromFile:
		return fmt.Sprintf("%s = %q (from %s): %s", e.Setting.Key, e.Value, e.Origin, e.Why)
	}
	return fmt.Sprintf("%s = %q: %s", e.Setting.Key, e.Value, e.Why)
}

// Config is the configuration in force: the environment it was loaded
// from, the file and every setting's value.
type Config struct {
	// File is the configuration file in use (absolute where it could be
	// made so), "" when none is known (no OFFCC_CONFIG and no home).
	File string
	// FileFound says whether File exists and was read.
	FileFound bool
	// Named says whether OFFCC_CONFIG names File.
	Named bool

	environ  []string
	values   []Value
	problems []error
}

// Load reads the configuration: the file (see the package comment) and
// environ, the process's environment ("KEY=value" entries). It always
// returns a Config, holding what could be read; the error, when not nil, is
// the first problem (Problems lists them all) and fails offcc's commands.
func Load(environ []string) (*Config, error) {
	c := &Config{environ: append([]string(nil), environ...)}
	c.File, c.Named = FilePath(c.lookupEnv)
	fileVals := map[string]Value{}
	if c.File != "" {
		data, err := os.ReadFile(c.File)
		switch {
		case err == nil:
			c.FileFound = true
			c.parse(string(data), fileVals)
		case errors.Is(err, fs.ErrNotExist) && !c.Named:
		case errors.Is(err, fs.ErrNotExist):
			c.problems = append(c.problems, fmt.Errorf("%s=%s: no such configuration file", EnvConfig, c.lookupEnv(EnvConfig)))
		default:
			c.problems = append(c.problems, fmt.Errorf("cannot read the configuration file %s: %v", c.File, unwrapPath(err)))
		}
	}
	for _, s := range All() {
		v := Value{Setting: s, Value: s.Default}
		if ev := c.lookupEnv(s.Env); ev != "" {
			v.Value, v.Origin = ev, Origin{Kind: FromEnv}
		} else if fv, ok := fileVals[s.Key]; ok {
			v = fv
		}
		if v.Origin.Kind != FromDefault {
			if why := Check(s, v.Value, v.Origin.Kind == FromFile); why != "" {
				v.Err = &ValueError{Setting: s, Value: v.Value, Origin: v.Origin, Why: why}
				c.problems = append(c.problems, v.Err)
			}
		}
		c.values = append(c.values, v)
	}
	if len(c.problems) > 0 {
		return c, c.problems[0]
	}
	return c, nil
}

// unwrapPath drops a *fs.PathError's operation and path (the message
// names the file already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parse reads the file's text into vals, by key, recording problems.
func (c *Config) parse(text string, vals map[string]Value) {
	home := c.lookupEnv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		key, val, ok := strings.Cut(t, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok {
			c.problems = append(c.problems, fmt.Errorf("%s:%d: not a setting: want \"key = value\", such as \"cache_size = 10G\"", c.File, n))
			continue
		}
		s, ok := byKey(key)
		if !ok {
			msg := fmt.Sprintf("%s:%d: unknown setting '%s'", c.File, n, key)
			if sug := Suggest(key); sug != "" {
				msg += fmt.Sprintf("; did you mean '%s'?", sug)
			}
			c.problems = append(c.problems, errors.New(msg))
			continue
		}
		if (s.Kind == Path || s.Kind == KeyList) && home != "" {
			val = expandHome(val, home, s.Kind == KeyList)
		}
		vals[s.Key] = Value{Setting: s, Value: val, Origin: Origin{Kind: FromFile, File: c.File, Line: n}}
	}
}

// expandHome replaces a leading "~/" (of each item of a list) by home.
func expandHome(v, home string, list bool) string {
	one := func(p string) string {
		if p == "~" {
			return home
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return p
	}
	if !list {
		return one(v)
	}
	var b strings.Builder
	start := 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == ':' || v[i] == ',' {
			b.WriteString(one(v[start:i]))
			if i < len(v) {
				b.WriteByte(v[i])
			}
			start = i + 1
		}
	}
	return b.String()
}

// FilePath returns the configuration file that getenv's environment names
// (see the package comment), and whether OFFCC_CONFIG names it; "" when no
// home directory is known either.
func FilePath(getenv func(string) string) (path string, named bool) {
	if p := getenv(EnvConfig); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return p, true
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "offcc", "offcc.conf"), false
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return "", false
	}
	return filepath.Join(home, ".config", "offcc", "offcc.conf"), false
}

// lookupEnv returns name's value in the loaded environment (the last entry
// wins, as for os/exec), "" when unset.
func (c *Config) lookupEnv(name string) string {
	for i := len(c.environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(c.environ[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Values returns every setting's value, in the order of All.
func (c *Config) Values() []Value { return append([]Value(nil), c.values...) }

// Get returns the value of the setting named key (its file key or its
// environment variable).
func (c *Config) Get(key string) (Value, bool) {
	s, ok := Lookup(key)
	if !ok {
		return Value{}, false
	}
	for _, v := range c.values {
		if v.Key == s.Key {
			return v, true
		}
	}
	return Value{}, false
}

// Problems returns every problem Load found: the file's, then the bad
// values in the order of All.
func (c *Config) Problems() []error { return append([]error(nil), c.problems...) }

// Environ returns the loaded environment with the file's settings added
// as their OFFCC_* variables where the environment does not set them (an
// empty variable counts as unset and is replaced): what offcc's parts read
// and what the processes it starts inherit. A boolean the file turns off
// that is off by default is left out.
func (c *Config) Environ() []string {
	add := map[string]string{}
	for _, v := range c.values {
		if v.Origin.Kind != FromFile || v.Value == "" {
			continue
		}
		if on, ok := ParseBool(v.Value); ok && v.Kind == Bool && !on && (v.Default == "" || v.Default == "0") {
			// Off, as by default: some readers take any value as on.
			continue
		}
		add[v.Env] = v.Value
	}
	out := make([]string, 0, len(c.environ)+len(add))
	for _, e := range c.environ {
		name, _, _ := strings.Cut(e, "=")
		if _, ok := add[name]; ok {
			continue // set, but empty: the file's value replaces it
		}
		out = append(out, e)
	}
	for _, v := range c.values {
		if val, ok := add[v.Env]; ok {
			out = append(out, v.Env+"="+val)
		}
	}
	return out
}

// Getenv returns name's value in Environ: an OFFCC_* setting from the
// environment or, failing that, the file ("" when neither sets it: the
// reader's default applies); any other variable from the environment.
func (c *Config) Getenv(name string) string {
	for _, v := range c.values {
		if v.Env == name && v.Origin.Kind != FromDefault {
			return v.Value
		}
	}
	return c.lookupEnv(name)
}

// Lookup returns the setting named key: its file key ("cache_size") or
// its environment variable ("OFFCC_CACHE_SIZE").
func Lookup(key string) (Setting, bool) {
	if s, ok := byKey(key); ok {
		return s, true
	}
	for _, s := range All() {
		if s.Env == key {
			return s, true
		}
	}
	return Setting{}, false
}

func byKey(key string) (Setting, bool) {
	for _, s := range All() {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

// Suggest returns the setting key closest to the unknown key (or the key of
// the environment variable it spells, in any case), "" when none is close.
func Suggest(key string) string {
	best, bestD := "", 0
	for _, s := range All() {
		if strings.EqualFold(key, s.Env) || strings.EqualFold(key, s.Key) {
			return s.Key
		}
		d := editdist.Distance(strings.ToLower(key), s.Key, math.MaxInt)
		if best == "" || d < bestD {
			best, bestD = s.Key, d
		}
	}
	if bestD <= max(2, len(key)/4) {
		return best
	}
	return ""
}
