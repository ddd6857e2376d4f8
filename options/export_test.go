package options

// LLVM19Tool and LLVM19Missing are llvm19Tool and llvm19Missing, for the
// external tests.
var (
	LLVM19Tool    = llvm19Tool
	LLVM19Missing = llvm19Missing
)
