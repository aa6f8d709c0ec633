package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// jsonBudgetRuns are the CLI runs of TestJSONBudgets: --json with -n 1 to 4
// on both test models, seeds 1..seeds.
func jsonBudgetRuns(t testing.TB, seeds int) [][]string {
	var runs [][]string
	for _, model := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf"} {
		for n := 1; n <= 4; n++ {
			for seed := 1; seed <= seeds; seed++ {
				runs = append(runs, []string{shareddata.Path(t, model), "--json", "-n", fmt.Sprint(n), "-s", fmt.Sprint(seed), "-p", "Once upon a time"})
			}
		}
	}
	return runs
}

// checkJSONOutput checks one run printed a complete valid JSON value (and the
// newline the CLI ends its output with).
func checkJSONOutput(t *testing.T, args []string, stdout string) {
	t.Helper()
	if !strings.HasSuffix(stdout, "\n") || !json.Valid([]byte(strings.TrimSuffix(stdout, "\n"))) {
		t.Errorf("%q printed %q: not one complete JSON value", args, stdout)
	}
}

// TestJSONBudgets: `picolm --json -n 1` printed "[" or "{" and exited 0 (30
// of 30 seeds); with -n 1 to 4 every run prints one complete JSON value.
func TestJSONBudgets(t *testing.T) {
	for _, args := range jsonBudgetRuns(t, 30) {
		stdout, _ := runCLI(t, args)
		checkJSONOutput(t, args, stdout)
	}
}
