// Command cgo-offload calls a C function with an OpenMP target region,
// built by offcc as cgo's C compiler and linker, and checks the result.
//
//	CC=offcc CGO_CFLAGS_ALLOW='-fopenmp-targets=.*' CGO_LDFLAGS_ALLOW='-fopenmp-targets=.*' \
//	    go build -o cgo-offload .
//	OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=/usr/lib/llvm-22/lib ./cgo-offload
//
// The link must be external (the default for cgo packages outside the
// standard library): offcc's link step registers the device image.
package main

/*
#cgo CFLAGS: -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu
#cgo LDFLAGS: -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu
#include "saxpy.h"
*/
import "C"

import (
	"fmt"
	"os"
)

func main() {
	const n = 1000
	x := make([]C.float, n)
	y := make([]C.float, n)
	for i := range x {
		x[i] = C.float(i)
		y[i] = 1
	}
	onDevice := C.saxpy(n, 2, &x[0], &y[0]) != 0
	sum := 0.0
	for _, v := range y {
		sum += float64(v)
	}
	want := float64(n)*(n-1) + n // sum of 2*i + 1
	fmt.Printf("on device: %s\n", map[bool]string{true: "yes", false: "no"}[onDevice])
	fmt.Printf("saxpy sum: %.1f\n", sum)
	if !onDevice || sum != want {
		fmt.Fprintf(os.Stderr, "cgo-offload: want the target region on the device and sum %.1f\n", want)
		os.Exit(1)
	}
}
