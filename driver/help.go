package driver

import "github.com/offcc/offcc/manual"

// helpText is offcc's --help: its own options, its environment and
// configuration, its subcommands, and a pointer to clang's options, which
// it accepts unchanged. Package manual renders it, from the same source as
// the man page.
func helpText(prog string) string {
	return manual.Help(prog)
}
