package main

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestThreadsCapped: -j 10000000 once started ten million goroutines (13 GB
// before any output); it is capped at maxThreadsPerCPU per CPU with a message.
func TestThreadsCapped(t *testing.T) {
	limit := maxThreadsPerCPU * runtime.NumCPU()
	for _, tc := range []struct {
		j    string
		want int
		msg  bool
	}{{"10000000", limit, true}, {"100000", limit, true}, {fmt.Sprint(limit + 1), limit, true}, {fmt.Sprint(limit), limit, false}, {"1", 1, false}} {
		var stderr bytes.Buffer
		o, err := parseArgs([]string{"-j", tc.j, "-p", "x"}, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if o.threads != tc.want || strings.Contains(stderr.String(), "using") != tc.msg {
			t.Errorf("-j %s: %d threads (want %d), stderr %q", tc.j, o.threads, tc.want, stderr.String())
		}
	}
	// A whole run with a huge -j: it completes, and says it capped.
	out, stderr := runCLI(t, []string{"-j", "10000000", "-n", "4", "-t", "0", "-p", "Once"})
	if out == "" || !strings.Contains(stderr, fmt.Sprintf("using %d", limit)) {
		t.Errorf("-j 10000000: output %q, stderr %s", out, stderr)
	}
	// quantize's -j too.
	var stderrQ bytes.Buffer
	run([]string{"quantize", "-j", "10000000", "/nonexistent.gguf", t.TempDir() + "/o.gguf", "Q8_0"}, nil, &bytes.Buffer{}, &stderrQ)
	if !strings.Contains(stderrQ.String(), fmt.Sprintf("using %d", limit)) {
		t.Errorf("quantize -j 10000000: %s", stderrQ.String())
	}
}
