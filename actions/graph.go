package actions

import (
	"fmt"
)

// Graph is a build plan: actions in planning order. An action is added
// after every action that writes one of its inputs, so the order is a
// topological order and the graph cannot have a cycle.
type Graph struct {
	// Actions lists the actions in the order they were added.
	Actions []*Action
	index   map[*Action]int
}

// Add appends a to the graph and makes it the producer of its outputs. It
// fails if a is already in the graph, if another action already writes one
// of its outputs, or if one of its inputs is written by an action that is
// not in the graph yet.
func (g *Graph) Add(a *Action) error {
	return g.add(a, nil)
}

// MustAdd is Add for plans built by code, where an error is a bug: it
// panics on error and returns a.
func (g *Graph) MustAdd(a *Action) *Action {
	if err := g.Add(a); err != nil {
		panic(err)
	}
	return a
}

// add adds a; parent is the action whose expansion added it (nil while
// planning). An expanded action's children may write the parent's outputs:
// the child becomes their producer.
func (g *Graph) add(a *Action, parent *Action) error {
	if a == nil {
		return fmt.Errorf("actions: nil action")
	}
	if g.index == nil {
		g.index = map[*Action]int{}
	}
	if _, dup := g.index[a]; dup {
		return fmt.Errorf("actions: %s is in the graph twice", a.Label())
	}
	if a.Run == nil && a.Expand == nil && len(a.Command) == 0 {
		return fmt.Errorf("actions: %s has no command, Run or Expand", a.Label())
	}
	for _, f := range a.AllInputs() {
		if f == nil {
			return fmt.Errorf("actions: %s has a nil input", a.Label())
		}
		if p := f.producer; p != nil {
			if _, ok := g.index[p]; !ok {
				return fmt.Errorf("actions: %s reads %s, written by %s, which is not in the graph", a.Label(), f.Path, p.Label())
			}
		}
	}
	for _, f := range a.Outputs {
		if f == nil {
			return fmt.Errorf("actions: %s has a nil output", a.Label())
		}
		if p := f.producer; p != nil && !(parent != nil && p == parent) {
			return fmt.Errorf("actions: %s and %s both write %s", p.Label(), a.Label(), f.Path)
		}
		for _, in := range a.AllInputs() {
			if in == f {
				return fmt.Errorf("actions: %s reads and writes %s", a.Label(), f.Path)
			}
		}
	}
	for _, f := range a.Outputs {
		f.producer = a
	}
	a.parent = parent
	g.index[a] = len(g.Actions)
	g.Actions = append(g.Actions, a)
	return nil
}

// Index returns a's position in the graph, or -1.
func (g *Graph) Index(a *Action) int {
	if i, ok := g.index[a]; ok {
		return i
	}
	return -1
}
