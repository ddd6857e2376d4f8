package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestWorkerUsageErrors: offcc worker's command-line mistakes are one
// clear line and exit status 1; --help prints the usage and exits 0.
func TestWorkerUsageErrors(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string // in stderr (stdout for --help)
	}{
		{"help", []string{"--help"}, nil, 0, "USAGE: offcc worker"},
		{"status help", []string{"status", "--help"}, nil, 0, "offcc worker status"},
		{"no server", nil, nil, 1, "offcc: error: worker: no server: give --redis URL or set OFFCC_REMOTE_EXEC"},
		{"no server for status", []string{"status"}, nil, 1, "offcc: error: worker status: no server"},
		{"bad jobs", []string{"--redis", "redis://127.0.0.1:1", "--jobs", "0"}, nil, 1, "--jobs must be at least 1, not 0"},
		{"unknown flag", []string{"--bogus"}, nil, 1, "offcc: error: worker: unknown argument '--bogus' (see 'offcc worker --help')"},
		{"misspelt flag", []string{"--job", "2"}, nil, 1, "offcc: error: worker: unknown argument '--job'; did you mean '--jobs'?\n"},
		{"misspelt flag with value", []string{"--redis", "redis://h:1", "-job=2"}, nil, 1, "offcc: error: worker: unknown argument '-job=2'; did you mean '-jobs=2'?\n"},
		{"misspelt status flag", []string{"status", "--jsn"}, nil, 1, "offcc: error: worker status: unknown argument '--jsn'; did you mean '--json'?\n"},
		{"flag without value", []string{"--jobs"}, nil, 1, "offcc: error: worker: argument to '--jobs' is missing (expected 1 value)\n"},
		{"misspelt status", []string{"statu"}, nil, 1, "offcc: error: worker: unexpected argument 'statu'; did you mean 'status'?\n"},
		{"stray argument", []string{"--redis", "redis://h:1", "extra"}, nil, 1, "unexpected argument 'extra'"},
		{"bad URL", []string{"--redis", "http://h:1"}, nil, 1, "offcc: error: worker: bad Redis URL"},
		{"bad URL from the environment", []string{"status"}, map[string]string{"OFFCC_REMOTE_EXEC": "nope"}, 1, "offcc: error: worker status: bad Redis URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := workerRun(context.Background(), tc.args, env(tc.env), &stdout, &stderr)
			out := stderr.String()
			if tc.code == 0 {
				out = stdout.String()
			}
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, want %d; output %q, want %q (stderr %q)", code, tc.code, out, tc.want, stderr.String())
			}
			if tc.code != 0 && strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
				t.Errorf("more than one line of error:\n%s", stderr.String())
			}
		})
	}
}
