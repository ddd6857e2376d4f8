package actions

import (
	"context"
	"io"
	"strings"
	"testing"
)

func nop(context.Context, io.Writer, io.Writer) error { return nil }

func TestValidateCycle(t *testing.T) {
	var g Graph
	a := g.Add(&Job{Tool: "clang", Outputs: []string{"a.o"}, Run: nop})
	b := g.Add(&Job{Tool: "Offload::Packager", Outputs: []string{"b.out"}, Run: nop, Deps: []*Job{a}})
	c := g.Add(&Job{Tool: "Offload::Linker", Outputs: []string{"c"}, Run: nop, Deps: []*Job{b}})
	g.Add(&Job{Tool: "other", Args: []string{"true"}, Deps: []*Job{c}})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	a.Deps = append(a.Deps, c)
	err := g.Validate()
	if err == nil {
		t.Fatal("no error for a cycle")
	}
	want := "dependency cycle: clang (a.o) -> Offload::Linker (c) -> Offload::Packager (b.out) -> clang (a.o)"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	if err := Execute(context.Background(), &g, Options{}); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("Execute on a cycle: %v", err)
	}
}

func TestValidateSelfAndMissing(t *testing.T) {
	var g Graph
	a := g.Add(&Job{Tool: "x", Run: nop})
	a.Deps = []*Job{a}
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "x -> x") {
		t.Errorf("self cycle: %v", err)
	}
	var h Graph
	h.Add(&Job{Tool: "y", Run: nop, Deps: []*Job{{Tool: "z", Run: nop}}})
	if err := h.Validate(); err == nil || !strings.Contains(err.Error(), "not in the graph") {
		t.Errorf("missing dep: %v", err)
	}
	var k Graph
	k.Add(&Job{Tool: "empty"})
	if err := k.Validate(); err == nil {
		t.Error("job without a command accepted")
	}
	var d Graph
	d.Add(a)
	d.Add(a)
	if err := d.Validate(); err == nil {
		t.Error("duplicate job accepted")
	}
}
