//go:build linux || darwin

package main

import "testing"

// TestWasmtimeHostileFiles: issue 13's attacks on the wasip1 build under
// wasmtime, the files in its /work directory: each refused before a byte
// is read, as natively and under wazero.
func TestWasmtimeHostileFiles(t *testing.T) {
	w := buildWasmtime(t, true)
	hostileFiles(t, w.scratch)
	for _, c := range hostileCases {
		var stdout, stderr string
		var code int
		withDeadline(t, c.name, func() { stdout, stderr, code = w.run(t, c.args("/work"), c.stdin) })
		checkHostile(t, c, w.scratch, stdout, stderr, code)
	}
}
