package actions

import (
	"bytes"
	"testing"
)

// TestStderrWatch checks that a tool's messages name the user's output,
// not its hidden temporary, and that a full disk is noticed.
func TestStderrWatch(t *testing.T) {
	var buf bytes.Buffer
	w := newStderrWatch(&buf, map[string]string{"out/.heavy.o.offcc-123": "out/heavy.o"})
	w.Write([]byte("error: unable to open output file 'out/.heavy.o.offcc-123': 'Permission denied'\n"))
	if got, want := buf.String(), "error: unable to open output file 'out/heavy.o': 'Permission denied'\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if w.full {
		t.Error("a full disk noticed in a permission error")
	}
	w.Write([]byte("fatal error: error in backend: IO failure on output stream: No space left on device\n"))
	if !w.full {
		t.Error("IO failure on output stream not noticed")
	}
}

// TestNoSpaceMessage checks the line's wording for a temporary of the
// build and for the user's output.
func TestNoSpaceMessage(t *testing.T) {
	src := NewArtifact("heavy.c")
	a := &Action{Kind: DeviceCompile, Device: true, Inputs: []*Artifact{src}}
	a.Target.Triple = "x86_64-pc-linux-gnu"
	if got, want := noSpaceMessage(a, "/tmp/full/offcc-1/heavy-abc.bc", "/tmp/full/offcc-1"),
		"offcc: error: no space left on device in TMPDIR (/tmp/full): writing the device-compile x86_64-pc-linux-gnu output of heavy.c"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := noSpaceMessage(a, "out/heavy.o", "/tmp/full/offcc-1"), "offcc: error: no space left on device: writing out/heavy.o"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
