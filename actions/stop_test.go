package actions

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStopAfterFailure: with StopAfterFailure, as clang's driver in a CUDA
// or HIP build, a failure stops what comes after it in the graph's order
// (a running action is killed, a ready one never starts, and neither
// prints), while what comes before it runs on and prints; the failure
// reported is the first in the graph's order, not in time.
func TestStopAfterFailure(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	// In clang's order: "first" runs longest and fails last in time,
	// "second" fails first in time, "third" runs long and would succeed,
	// "fourth" waits for a slot.
	first := g.MustAdd(&Action{Kind: DeviceCompile, Cost: 1, Outputs: []*Artifact{NewArtifact(p("first.o"))},
		Command: []string{"sh", "-c", `sleep 0.6; echo "error in first" >&2; exit 3`}})
	g.MustAdd(&Action{Kind: DeviceCompile, Cost: 1, Outputs: []*Artifact{NewArtifact(p("second.o"))},
		Command: []string{"sh", "-c", `echo "error in second" >&2; exit 1`}})
	g.MustAdd(&Action{Kind: DeviceCompile, Cost: 1, Outputs: []*Artifact{NewArtifact(p("third.o"))},
		Command: []string{"sh", "-c", `echo $$ > "$2"; sleep 20; echo "warning in third" >&2; echo x > "$1"`, "sh", p("third.o"), p("third.pid")}})
	g.MustAdd(&Action{Kind: DeviceCompile, Cost: 1, Outputs: []*Artifact{NewArtifact(p("fourth.o"))},
		Command: []string{"sh", "-c", `echo "warning in fourth" >&2; echo x > "$1"`, "sh", p("fourth.o")}})
	var stderr bytes.Buffer
	t0 := time.Now()
	err := Execute(context.Background(), &g, NewShell(ShellOptions{Stdout: io.Discard, Stderr: &stderr}),
		Options{Jobs: 3, StopAfterFailure: true})
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("took %v: the running action after the failure was not killed", d)
	}
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != first || ee.Code != 3 {
		t.Fatalf("err = %#v, want the first failure in the graph's order (exit 3)", err)
	}
	if got, want := stderr.String(), "error in first\n"; got != want {
		t.Errorf("stderr = %q, want %q (only what clang's driver would have printed)", got, want)
	}
	for _, f := range []string{"third.o", "fourth.o"} {
		if _, err := os.Stat(p(f)); err == nil {
			t.Errorf("%s was written: an action after the failure ran to its end", f)
		}
	}
	if pid, err := os.ReadFile(p("third.pid")); err == nil {
		t.Logf("third ran as %s and was killed", strings.TrimSpace(string(pid)))
	}
}

// TestStopAfterFailureKeepsEarlier: a failure stops only what comes after
// it; an action before it in the graph's order, still running, finishes
// and prints, and its output comes first.
func TestStopAfterFailureKeepsEarlier(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	g.MustAdd(&Action{Kind: DeviceCompile, Cost: 1, Outputs: []*Artifact{NewArtifact(p("first.o"))},
		Command: []string{"sh", "-c", `sleep 0.5; echo "warning in first" >&2; echo x > "$1"`, "sh", p("first.o")}})
	failed := g.MustAdd(&Action{Kind: DeviceCompile, Cost: 1, Outputs: []*Artifact{NewArtifact(p("second.o"))},
		Command: []string{"sh", "-c", `echo "error in second" >&2; exit 1`}})
	var stderr bytes.Buffer
	err := Execute(context.Background(), &g, NewShell(ShellOptions{Stdout: io.Discard, Stderr: &stderr}),
		Options{Jobs: 2, StopAfterFailure: true})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != failed {
		t.Fatalf("err = %#v, want the second action's failure", err)
	}
	if got, want := stderr.String(), "warning in first\nerror in second\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	if _, err := os.Stat(p("first.o")); err != nil {
		t.Errorf("the action before the failure did not finish: %v", err)
	}
}

// TestStopAfterFailureInExpansion: within an expansion (the link stage's
// device links) the order is the order the expansion added its actions in.
func TestStopAfterFailureInExpansion(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	g.MustAdd(&Action{Kind: Link, Outputs: []*Artifact{NewArtifact(p("prog"))},
		Expand: func(context.Context, *Shell) ([]*Action, error) {
			return []*Action{
				{Kind: DeviceLink, Outputs: []*Artifact{NewArtifact(p("a.img"))},
					Command: []string{"sh", "-c", `sleep 0.4; echo "error in a" >&2; exit 1`}},
				{Kind: DeviceLink, Outputs: []*Artifact{NewArtifact(p("b.img"))},
					Command: []string{"sh", "-c", `echo "error in b" >&2; exit 1`}},
			}, nil
		}})
	var stderr bytes.Buffer
	err := Execute(context.Background(), &g, NewShell(ShellOptions{Stdout: io.Discard, Stderr: &stderr}),
		Options{Jobs: 2, StopAfterFailure: true})
	if err == nil {
		t.Fatal("no error")
	}
	if got, want := stderr.String(), "error in a\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

// TestStopAfterFailureOneJob: with one job at a time the actions still
// run longest path first, so an action after the failure in the graph's
// order may have run (and failed) before it; its output is still not
// printed.
func TestStopAfterFailureOneJob(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var g Graph
	first := g.MustAdd(&Action{Kind: DeviceCompile, Cost: 1, Outputs: []*Artifact{NewArtifact(p("first.o"))},
		Command: []string{"sh", "-c", `echo "error in first" >&2; exit 2`}})
	// Longer: it runs first.
	g.MustAdd(&Action{Kind: DeviceCompile, Cost: 5, Outputs: []*Artifact{NewArtifact(p("second.o"))},
		Command: []string{"sh", "-c", `echo "error in second" >&2; exit 1`}})
	var stderr bytes.Buffer
	err := Execute(context.Background(), &g, NewShell(ShellOptions{Stdout: io.Discard, Stderr: &stderr}),
		Options{Jobs: 1, StopAfterFailure: true})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Action != first || ee.Code != 2 {
		t.Fatalf("err = %#v, want the first action's failure", err)
	}
	if got, want := stderr.String(), "error in first\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}
