package actions

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PrintBindings writes the graph as clang's -ccc-print-bindings does: one
// line per action with its triple, tool, inputs and first output.
func PrintBindings(w io.Writer, g *Graph) {
	for _, a := range g.Actions {
		in := make([]string, len(a.Inputs))
		for i, f := range a.Inputs {
			in[i] = strconv.Quote(f.Path)
		}
		out := ""
		if len(a.Outputs) > 0 {
			out = a.Outputs[0].Path
		}
		fmt.Fprintf(w, "# %q - %q, inputs: [%s], output: %q\n", a.Target.Triple, a.ToolName(), strings.Join(in, ", "), out)
	}
}

// jsonFile is one input or output in --print-job-graph=json.
type jsonFile struct {
	Path string `json:"path"`
	// Producer is the id of the action that writes the file; absent for
	// files that exist before the build.
	Producer *int `json:"producer,omitempty"`
}

// jsonAction is one action in --print-job-graph=json.
type jsonAction struct {
	ID      int        `json:"id"`
	Kind    string     `json:"kind"`
	Offload string     `json:"offload,omitempty"`
	Triple  string     `json:"triple,omitempty"`
	Arch    string     `json:"arch,omitempty"`
	Tool    string     `json:"tool"`
	Command []string   `json:"command,omitempty"`
	InProc  bool       `json:"in_process,omitempty"`
	Expands bool       `json:"expands,omitempty"`
	Inputs  []jsonFile `json:"inputs"`
	Reads   []jsonFile `json:"reads,omitempty"`
	Outputs []string   `json:"outputs"`
	Deps    []int      `json:"deps"`
	Cost    float64    `json:"cost"`
	// Fallback is why clang's driver runs the command line whole.
	Fallback string `json:"fallback,omitempty"`
	// CacheKey and Cache come from the probe given to WriteJSON.
	CacheKey string `json:"cache_key,omitempty"`
	Cache    string `json:"cache,omitempty"`
}

// Probe tells what the build cache would do with an action: its key (""
// when it cannot be computed before the build runs) and its status ("hit",
// "miss", "uncacheable: REASON", ...).
type Probe func(a *Action) (key, status string)

// WriteJSON writes the graph as JSON: {"actions": [...]}, each action with
// its id (its position), kind, offload side, target, tool, command, inputs
// (with the id of the action writing each), outputs and dependencies, and,
// when probe is not nil, its cache key and status.
func WriteJSON(w io.Writer, g *Graph, probe Probe) error {
	files := func(fs []*Artifact) []jsonFile {
		out := make([]jsonFile, 0, len(fs))
		for _, f := range fs {
			jf := jsonFile{Path: f.Path}
			if p := f.Producer(); p != nil {
				id := g.Index(p)
				jf.Producer = &id
			}
			out = append(out, jf)
		}
		return out
	}
	var doc struct {
		Actions []jsonAction `json:"actions"`
	}
	doc.Actions = []jsonAction{}
	for i, a := range g.Actions {
		ja := jsonAction{
			ID: i, Kind: a.Kind.String(), Offload: a.SideName(),
			Triple: a.Target.Triple, Arch: a.Target.Arch, Tool: a.ToolName(),
			Command: a.Command, InProc: a.Run != nil, Expands: a.Expand != nil,
			Inputs: files(a.Inputs), Outputs: paths(a.Outputs), Deps: []int{}, Cost: a.cost(),
			Fallback: a.FallbackReason,
		}
		if len(a.Reads) > 0 {
			ja.Reads = files(a.Reads)
		}
		for _, d := range a.Deps() {
			ja.Deps = append(ja.Deps, g.Index(d))
		}
		if probe != nil {
			ja.CacheKey, ja.Cache = probe(a)
		}
		doc.Actions = append(doc.Actions, ja)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteDot writes the graph in Graphviz's dot language: a node per action
// (kind, target, command or tool) and an edge per file one action writes
// and another reads, labelled with the file's base name.
func WriteDot(w io.Writer, g *Graph) error {
	var b strings.Builder
	b.WriteString("digraph offcc {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n")
	for i, a := range g.Actions {
		label := a.Kind.String()
		if s := a.SideName(); s != "" {
			label += " (" + s + ")"
		}
		if a.Target.Triple != "" {
			label += "\n" + a.Target.Triple
			if a.Target.Arch != "" {
				label += " " + a.Target.Arch
			}
		}
		label += "\n" + a.ToolName()
		fmt.Fprintf(&b, "  a%d [label=%s];\n", i, dotQuote(label))
	}
	for i, a := range g.Actions {
		for _, f := range a.AllInputs() {
			p := f.Producer()
			if p == nil {
				continue
			}
			fmt.Fprintf(&b, "  a%d -> a%d [label=%s];\n", g.Index(p), i, dotQuote(baseName(f.Path)))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// dotQuote quotes s as a dot string, with newlines as \n.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
