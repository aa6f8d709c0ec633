//go:build linux || darwin

package main

import (
	"strings"
	"testing"
)

// TestWasmtimeHostileFiles: issue 13's attacks on the wasip1 build under
// wasmtime, the files in its /work directory: each refused before a byte
// is read, as natively and under wazero. The link to /dev/zero is refused
// by wasmtime itself, which follows no symbolic link out of a preopened
// directory: the CLI's stat fails with EPERM.
func TestWasmtimeHostileFiles(t *testing.T) {
	w := buildWasmtime(t, true)
	hostileFiles(t, w.scratch)
	for _, c := range hostileCases {
		if strings.Contains(c.name, "zero.") {
			c.want = "Operation not permitted (under WASI"
		}
		var stdout, stderr string
		var code int
		withDeadline(t, c.name, func() { stdout, stderr, code = w.run(t, c.args("/work"), c.stdin) })
		checkHostile(t, c, w.scratch, stdout, stderr, code)
	}
}
