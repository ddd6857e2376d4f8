package options

// clangSemantics is what offcc knows of clang's options beyond clang's
// table, by option ID: what their values name, which make a job
// uncacheable and which never run on a farm worker. An option not listed
// has NoValue (Flag) or a value that names nothing offcc must know of.
var clangSemantics = map[string]Semantics{}
