package main

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// refCase is one of llama.cpp's greedy references.
type refCase struct{ shareddata.Reference }

func (c refCase) name() string { return c.Model + "/" + c.Prompt }

func (c refCase) args() []string {
	return []string{c.File, "-p", c.Prompt, "-n", strconv.Itoa(c.NPredict), "-t", "0", "-j", "1", "--ids"}
}

// loadRefCases reads every reference file: reference/*.jsonl and
// synth/greedy.jsonl.
func loadRefCases(t *testing.T) []refCase {
	t.Helper()
	files, _ := filepath.Glob(shareddata.Path(t, "reference/*.jsonl"))
	var rels []string
	for _, f := range files {
		rels = append(rels, "reference/"+filepath.Base(f))
	}
	var cases []refCase
	for _, rel := range append(rels, "synth/greedy.jsonl") {
		for _, r := range shareddata.References(t, rel) {
			cases = append(cases, refCase{r})
		}
	}
	if len(cases) < 10 {
		t.Fatalf("only %d reference cases found under %s", len(cases), shareddata.Dir(t))
	}
	return cases
}

// supported reports whether every tensor type of the model has kernels; the
// IQ4_XS cases wait for the codebook formats.
func supported(t *testing.T, path string) (bool, string) {
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, ti := range f.Tensors {
		if !quant.TraitsOf(ti.Type).HasDot() {
			return false, ti.Type.String()
		}
	}
	return true, ""
}

// checkIDs compares generated ids with llama.cpp's. A divergence is accepted
// only at a step where llama.cpp's top-1/top-2 margin was below 0.01 (float
// summation order may pick the other token); the comparison stops there.
// It reports whether the whole sequence matched.
func checkIDs(t *testing.T, c refCase, got []int) bool {
	t.Helper()
	for i, want := range c.IDs {
		if i >= len(got) {
			t.Errorf("%s: generated %d tokens, llama.cpp %d", c.name(), len(got), len(c.IDs))
			return false
		}
		if got[i] != want {
			if i < len(c.Margins) && c.Margins[i] < 0.01 {
				t.Logf("%s: diverged at step %d where the margin is %.4g (accepted)", c.name(), i, c.Margins[i])
				return false
			}
			t.Errorf("%s: step %d: got token %d, llama.cpp %d (margin %.4g)\n got  %v\n want %v", c.name(), i, got[i], want, c.Margins[i], got, c.IDs)
			return false
		}
	}
	if len(got) != len(c.IDs) {
		t.Errorf("%s: generated %d tokens, llama.cpp %d", c.name(), len(got), len(c.IDs))
		return false
	}
	return true
}

func parseIDs(t *testing.T, s string) []int {
	var ids []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("--ids printed %q", s)
		}
		ids = append(ids, n)
	}
	return ids
}

// runCLI runs picolm with args and an empty stdin, failing t unless it
// exits 0, and returns its stdout and stderr.
func runCLI(t *testing.T, args []string) (string, string) {
	t.Helper()
	return runCLIStdin(t, args, "")
}

// TestGreedyMatchesLlamaCpp runs every reference case through the CLI with
// --ids at temperature 0 and compares with llama.cpp's ids, then checks the
// text the CLI prints equals llama.cpp's continuation.
func TestGreedyMatchesLlamaCpp(t *testing.T) {
	full, total := 0, 0
	for _, c := range loadRefCases(t) {
		if ok, typ := supported(t, c.File); !ok {
			t.Logf("%s: skipped: %s kernels are not implemented", c.name(), typ)
			continue
		}
		total++
		out, _ := runCLI(t, c.args())
		if checkIDs(t, c, parseIDs(t, out)) {
			full++
			if c.Continuation != "" {
				text, _ := runCLI(t, c.args()[:len(c.args())-1])
				if text != c.Continuation {
					t.Errorf("%s: text\n got  %q\n want %q", c.name(), text, c.Continuation)
				}
			}
		}
	}
	t.Logf("%d of %d supported cases match llama.cpp token for token; the rest diverge only at near-ties", full, total)
}

// runCLIStdin is runCLI with stdin as the standard input.
func runCLIStdin(t *testing.T, args []string, stdin string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, strings.NewReader(stdin), &out, &errb); code != 0 {
		t.Fatalf("picolm %q: exit %d: %s", args, code, errb.String())
	}
	return out.String(), errb.String()
}

// exitCase is a command line that must fail: the exit code it must give and
// a part of the message it must write to stderr.
type exitCase struct {
	args []string
	code int
	msg  string
}

// checkExits runs each case with an empty stdin and reports those whose exit
// code or stderr differ from the case's.
func checkExits(t *testing.T, cases []exitCase) {
	t.Helper()
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, strings.NewReader(""), &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args[1:], code, stderr.String(), c.code, c.msg)
		}
	}
}
