// Package objfile reads and edits the host object containers offload
// toolchains use: ELF64 objects (sections, adding a section) and ar archives.
package objfile
