// Package tempname makes the random parts of temporary file names the way
// clang does: six hex digits, as in /tmp/m-gfx90a-d7f0b6.bc.
package tempname

import (
	"fmt"
	"math/rand/v2"
)

// Hex6 returns six random lowercase hex digits. The names live in private
// directories, so they need to be distinct, not unpredictable.
func Hex6() string { return fmt.Sprintf("%06x", rand.Uint32()&0xffffff) }
