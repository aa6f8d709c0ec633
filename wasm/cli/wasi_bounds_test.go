//go:build linux || darwin

package main

import "testing"

// TestWASIHostileFiles: the same attacks on the wasip1 build under wazero,
// the files in its /work directory. WASI has no type for a named pipe (Go
// reports WASI's "unknown" type as a regular file): it is refused all the
// same, before it is opened.
func TestWASIHostileFiles(t *testing.T) {
	w := buildWASI(t)
	hostileFiles(t, w.scratch)
	for _, c := range hostileCases {
		var stdout, stderr string
		var code int
		withDeadline(t, c.name, func() { stdout, stderr, code = w.run(t, c.args("/work"), c.stdin) })
		checkHostile(t, c, w.scratch, stdout, stderr, code)
	}
}

// TestWASIJSONBudgets: --json with -n 1 to 4 under WASI prints one complete
// JSON value, as natively.
func TestWASIJSONBudgets(t *testing.T) {
	w := buildWASI(t)
	for _, args := range jsonBudgetRuns(t, 3) {
		stdout, stderr, code := w.run(t, args, "")
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		checkJSONOutput(t, args, stdout)
	}
}
