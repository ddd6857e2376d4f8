package actions

import (
	"context"
	"strings"
	"testing"
)

func nop(context.Context, *Shell) error { return nil }

// TestGraphEdgesAreArtifacts checks that dependencies follow from the files
// actions read, and that Add refuses plans with a missing or doubled edge.
func TestGraphEdgesAreArtifacts(t *testing.T) {
	var g Graph
	src := NewArtifact("m.c")
	ir := NewArtifact("m.bc")
	front := g.MustAdd(&Action{Kind: HostFrontend, Inputs: []*Artifact{src}, Outputs: []*Artifact{ir}, Run: nop})
	dev := g.MustAdd(&Action{Kind: DeviceCompile, Inputs: []*Artifact{src, ir}, Outputs: []*Artifact{NewArtifact("m-dev.bc")}, Run: nop})
	pack := g.MustAdd(&Action{Kind: Package, Inputs: dev.Outputs, Reads: []*Artifact{ir}, Outputs: []*Artifact{NewArtifact("m.out")}, Run: nop})
	if d := dev.Deps(); len(d) != 1 || d[0] != front {
		t.Errorf("device compile deps %v", d)
	}
	if d := pack.Deps(); len(d) != 2 || d[0] != dev || d[1] != front {
		t.Errorf("packager deps %v", d)
	}
	if ir.Producer() != front || src.Producer() != nil {
		t.Error("producers not recorded")
	}

	for _, tc := range []struct {
		name string
		add  func(g *Graph) error
		want string
	}{
		{"two writers", func(g *Graph) error {
			f := NewArtifact("x.o")
			g.MustAdd(&Action{Tool: "a", Outputs: []*Artifact{f}, Run: nop})
			return g.Add(&Action{Tool: "b", Outputs: []*Artifact{f}, Run: nop})
		}, "both write x.o"},
		{"producer not in graph", func(g *Graph) error {
			f := NewArtifact("y.o")
			other := &Graph{}
			other.MustAdd(&Action{Tool: "a", Outputs: []*Artifact{f}, Run: nop})
			return g.Add(&Action{Tool: "b", Inputs: []*Artifact{f}, Run: nop})
		}, "not in the graph"},
		{"reads its output", func(g *Graph) error {
			f := NewArtifact("z.o")
			return g.Add(&Action{Tool: "a", Inputs: []*Artifact{f}, Outputs: []*Artifact{f}, Run: nop})
		}, "reads and writes z.o"},
		{"no command", func(g *Graph) error { return g.Add(&Action{Tool: "a"}) }, "no command"},
		{"twice", func(g *Graph) error {
			a := g.MustAdd(&Action{Tool: "a", Run: nop})
			return g.Add(a)
		}, "twice"},
	} {
		err := tc.add(&Graph{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
