// Package bundler reads and writes clang-offload-bundler's formats in pure
// Go, byte-compatible with LLVM 22: binary bundles (the
// "__CLANG_OFFLOAD_BUNDLE__" header and payloads), text bundles (comment
// markers around each payload), object bundles (one
// "__CLANG_OFFLOAD_BUNDLE__<ID>" section per target in a host ELF object)
// and archives of bundled objects (unbundling only). Compressed bundles
// (CCOB) are unwrapped with package bundler/ccob before parsing.
//
// Main implements the clang-offload-bundler command line on top of it.
// Parsers check every offset and size against their input, never allocate
// in proportion to a count read from the input, and report malformed input
// as a *FormatError naming the structure and its byte offset.
package bundler
