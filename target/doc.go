// Package target models what LLVM 22 and clang 22 know about offload
// targets: target triples (llvm::Triple's component parsing, normalisation
// and equality), clang's offload architecture names (OffloadArch) and the
// triple the driver deduces for each, AMDGPU-style target IDs
// (<processor>(:<feature>(+|-))*) and their conflict rules, and the
// (triple, arch) pairs that clang-linker-wrapper groups device code by.
// It is pure Go and runs no tools.
package target
