package inspect

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteTree prints n and its children as an indented tree, one node a
// line: what it is, its target, its size and offset, and its keys.
func WriteTree(w io.Writer, n *Node) error {
	var b strings.Builder
	writeNode(&b, n, "", "", true)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeNode(b *strings.Builder, n *Node, prefix, branch string, root bool) {
	b.WriteString(prefix)
	b.WriteString(branch)
	b.WriteString(label(n, root))
	b.WriteByte('\n')
	childPrefix := prefix
	if !root {
		if branch == "└─ " {
			childPrefix += "   "
		} else {
			childPrefix += "│  "
		}
	}
	for i, c := range n.Children {
		br := "├─ "
		if i == len(n.Children)-1 {
			br = "└─ "
		}
		writeNode(b, c, childPrefix, br, false)
	}
}

// kindNames are the words a node's kind is printed as.
var kindNames = map[string]string{
	"elf":                  "",
	"section":              "section",
	"archive":              "archive",
	"offload-binary":       "offload binary",
	"image":                "image",
	"bundle":               "bundle",
	"bundle-entry":         "bundle entry",
	"compressed-bundle":    "compressed bundle",
	"syclbin":              "SYCLBIN",
	"syclbin-module":       "module",
	"syclbin-property-set": "property set",
	"syclbin-ir":           "IR module",
	"syclbin-native":       "native image",
	"pocl-program":         "pocl program binary",
	"pocl-kernel":          "kernel",
	"poclbin-archive":      "poclbin archive",
	"file-entry":           "file",
	"bitcode":              "LLVM bitcode",
	"spirv":                "",
	"nv-fatbin":            "NVIDIA fat binary",
	"nv-fatbin-entry":      "fatbin entry",
	"nv-fatbin-wrapper":    "fatbin wrapper",
	"ptx":                  "PTX",
	"data":                 "data",
	"sequence":             "concatenated",
}

// label is one line describing n.
func label(n *Node, root bool) string {
	var parts []string
	name := kindNames[n.Kind]
	if name == "" && n.Format == "" {
		name = n.Kind
	}
	if n.Name != "" {
		if root {
			parts = append(parts, n.Name+":")
		} else if n.Kind == "syclbin-property-set" {
			name += " [" + n.Name + "]"
		} else if n.Kind != "bundle-entry" {
			name = strings.TrimSpace(name + " " + n.Name)
			if name == n.Name && n.Kind == "elf" {
				name += ":"
			}
		}
	}
	if name != "" {
		parts = append(parts, name)
	}
	if n.Kind == "bundle-entry" {
		parts = append(parts, n.Name)
	}
	if n.Version != 0 {
		parts = append(parts, fmt.Sprintf("v%d", n.Version))
	}
	if n.Format != "" {
		parts = append(parts, n.Format)
	}
	var attrs []string
	if n.Producer != "" && n.Kind != "bundle-entry" {
		attrs = append(attrs, "producer "+n.Producer)
	}
	if n.Triple != "" && n.Kind != "bundle-entry" {
		attrs = append(attrs, "triple "+n.Triple)
	}
	if n.Arch != "" && n.Kind != "bundle-entry" {
		attrs = append(attrs, "arch "+n.Arch)
	}
	if len(n.Kernels) > 0 {
		attrs = append(attrs, "kernels "+strings.Join(n.Kernels, " "))
	}
	keys := make([]string, 0, len(n.Keys))
	for k := range n.Keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		attrs = append(attrs, k+"="+n.Keys[k])
	}
	line := strings.Join(parts, " ")
	if len(attrs) > 0 {
		line += ", " + strings.Join(attrs, ", ")
	}
	switch n.Kind {
	case "syclbin-property-set": // no bytes of its own
		return line
	case "syclbin-module": // code in several places
		return line + fmt.Sprintf(" (%d bytes)", n.Size)
	}
	return line + fmt.Sprintf(" (%d bytes at %#x)", n.Size, n.Offset)
}
