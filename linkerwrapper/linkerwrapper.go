// Package linkerwrapper is offcc's link stage: it extracts offload images
// from host objects and archives, links them per (triple, arch), wraps them
// with registration code and runs the host link, like clang-linker-wrapper.
package linkerwrapper
