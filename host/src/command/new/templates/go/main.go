// {{name}}: a wasm-bench program in Go (a WASI preview 1 command, timed
// by the Sightglass protocol).
//
// The host runs main once per iteration on a fresh instance and times the
// work between bench.start() and bench.end() (without them, the whole run).
// The program's folder is its working folder (preopened read-only as `/`
// and `.`): it reads its input from {{name}}.input.txt there, so that the
// compiler cannot fold the work into a constant. What it prints is checked
// against {{name}}.stdout.expected, when that file exists.
//
// The example takes n xorshift64 steps; replace the marked work with yours.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

//go:wasmimport bench start
func benchStart()

//go:wasmimport bench end
func benchEnd()

func main() {
	text, err := os.ReadFile("{{name}}.input.txt")
	if err != nil {
		fmt.Fprintln(os.Stderr, "{{name}}:", err)
		os.Exit(1)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(text)), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "{{name}}: {{name}}.input.txt:", err)
		os.Exit(1)
	}
	benchStart()
	// --- the work (replace it)
	x, acc := uint64(0x9e3779b97f4a7c15), uint64(0)
	for i := uint64(0); i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		acc = (acc<<1 | acc>>63) ^ x
	}
	// ---
	benchEnd()
	fmt.Printf("{{name}}(%d) = %016x\n", n, acc)
}
