package options

// The groups of include directories, in the order the preprocessor
// searches them.
const (
	quoteDirs = iota
	angledDirs
	systemDirs
	afterDirs
	dirGroups
)

// headerSearchGroups are the groups of the clang -cc1 options that add
// include directories, by option ID.
var headerSearchGroups = map[string]int{
	"iquote":  quoteDirs,
	"I":       angledDirs,
	"isystem": systemDirs, "internal_isystem": systemDirs, "internal_externc_isystem": systemDirs,
	"c_isystem": systemDirs, "cxx_isystem": systemDirs, "objc_isystem": systemDirs, "objcxx_isystem": systemDirs,
	"idirafter": afterDirs, "isystem_after": afterDirs,
}

// HeaderSearchDirs returns the include directories a parsed clang -cc1
// command line adds (-iquote, -I, the system ones, -idirafter), in the
// order the preprocessor searches them, each once.
func HeaderSearchDirs(args []*Arg) []string {
	var groups [dirGroups][]string
	for _, a := range args {
		if g, ok := headerSearchGroups[a.Option.ID]; ok && a.Value() != "" {
			groups[g] = append(groups[g], a.Value())
		}
	}
	var dirs []string
	seen := map[string]bool{}
	for _, list := range groups {
		for _, d := range list {
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}
