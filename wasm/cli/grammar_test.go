//go:build !wasm

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

var stopRe = regexp.MustCompile(`stop: (\S+)`)

// TestGrammarFlag: `--grammar FILE` with each of llama.cpp's grammars, at temperature 1 on both test
// models and several seeds, prints a sentence of the grammar (checked with the grammar's reference
// recogniser, not the matcher that made it), and says why it stopped.
func TestGrammarFlag(t *testing.T) {
	files, err := filepath.Glob("../../engine/grammar/testdata/gbnf/*.gbnf")
	if err != nil || len(files) < 8 {
		t.Fatalf("llama.cpp's grammars: %d files, %v", len(files), err)
	}
	stops := map[string]int{}
	for _, model := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf"} {
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			g, err := grammar.ParseGBNF(string(src))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for seed := 1; seed <= 3; seed++ {
				args := []string{shareddata.Path(t, model), "--grammar", f, "-t", "1", "-s", fmt.Sprint(seed), "-n", "48", "-p", "Once upon a time"}
				out, stderr := runCLI(t, args)
				out = strings.TrimSuffix(out, "\n")
				if !g.Recognise(out) {
					t.Errorf("%s %s seed %d: %q is not a sentence of the grammar", model, filepath.Base(f), seed, out)
				}
				m := stopRe.FindStringSubmatch(stderr)
				if m == nil {
					t.Fatalf("no stop reason: %s", stderr)
				}
				stops[m[1]]++
				if seed == 1 {
					t.Logf("%s %s: %q (stop: %s)", model, filepath.Base(f), out, m[1])
				}
			}
		}
	}
	t.Logf("stop reasons: %v", stops)
}

// TestGrammarFlagErrors: a grammar or schema that cannot be compiled is refused before the model loads,
// with the file, the line and column or the keyword.
func TestGrammarFlagErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.gbnf", "root ::= item+\nitem ::= \"- \" thing\n")
	leftrec := write("left.gbnf", "root ::= root \"x\" | \"y\"\n")
	schema := write("s.json", `{"type": "object", "properties": {"a": {"type": "string", "contentEncoding": "base64"}}}`)
	notJSON := write("n.json", `{"type": `)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--grammar", bad, "-p", "x"}, 1, "bad.gbnf: grammar: line 2 column 15: undefined rule thing"},
		{[]string{"--grammar", leftrec, "-p", "x"}, 1, "left recursion is not supported: root -> root"},
		{[]string{"--json-schema", schema, "-p", "x"}, 1, `at #/properties/a: keyword "contentEncoding" is not supported`},
		{[]string{"--json-schema", notJSON, "-p", "x"}, 1, "not valid JSON"},
		{[]string{"--grammar", filepath.Join(dir, "missing.gbnf"), "-p", "x"}, 1, "no such file"},
		{[]string{"--grammar", dir, "-p", "x"}, 1, "a directory"},
		{[]string{"--grammar", bad, "--json", "-p", "x"}, 2, "give at most one"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}

// TestGrammarEnds: a grammar whose sentence is complete and allows nothing more ends the generation
// with the stated reason "grammar"; one that no output fits in -n tokens is refused before generating.
func TestGrammarEnds(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "yes.gbnf")
	if err := os.WriteFile(g, []byte(`root ::= "yes" | "no"`), 0o644); err != nil {
		t.Fatal(err)
	}
	model := shareddata.Path(t, "llama-2-tiny-random.gguf")
	for seed := 1; seed <= 5; seed++ {
		out, stderr := runCLI(t, []string{model, "--grammar", g, "-t", "1", "-s", fmt.Sprint(seed), "-n", "20", "-p", "Answer:"})
		if out != "yes\n" && out != "no\n" || !strings.Contains(stderr, "stop: grammar") {
			t.Errorf("seed %d: %q, %s", seed, out, stderr)
		}
	}
	long := filepath.Join(dir, "long.gbnf")
	if err := os.WriteFile(long, []byte(`root ::= [a-z]{40}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{shareddata.Path(t, "stories260K.gguf"), "--grammar", long, "-n", "3", "-p", "x"}, strings.NewReader(""), &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "no complete output of the grammar fits") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// schemaSeeds is how many seeds TestJSONSchemaFlag runs for each schema:
// PICOLM_SCHEMA_SEEDS (scripts/schema-ajv.sh: 10, the full run), else 1
// (go test, and so CI: every schema, one seed).
func schemaSeeds(t *testing.T) int {
	v := os.Getenv("PICOLM_SCHEMA_SEEDS")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1000 {
		t.Fatalf("PICOLM_SCHEMA_SEEDS=%q: want a count from 1 to 1000", v)
	}
	return n
}

// TestJSONSchemaFlag: for every schema in engine/grammar/testdata/schemas (llama.cpp's json-schema-to-grammar test
// schemas, read as data, and ours), `--json-schema FILE` at temperature 1 prints JSON that ajv (npm)
// validates against the schema, for every one of schemaSeeds seeds.
func TestJSONSchemaFlag(t *testing.T) {
	seeds := schemaSeeds(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat("../../node_modules/ajv/package.json"); err != nil {
		t.Fatal("ajv is missing from node_modules: run npm ci at the repository root")
	}
	files, err := filepath.Glob("../../engine/grammar/testdata/schemas/*.json")
	if err != nil || len(files) < 30 {
		t.Fatalf("testdata/schemas: %d schemas, %v", len(files), err)
	}
	type job struct {
		Name    string          `json:"name"`
		Schema  json.RawMessage `json:"schema"`
		Outputs []string        `json:"outputs"`
	}
	var jobs []job
	models := []string{shareddata.Path(t, "stories260K.gguf"), shareddata.Path(t, "llama-2-tiny-random.gguf")}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		j := job{Name: filepath.Base(f), Schema: b}
		model := models[i%3/2] // two thirds on stories260K (512 tokens), one on Llama 2's 32k vocabulary
		for seed := 1; seed <= seeds; seed++ {
			out, stderr := runCLI(t, []string{model, "--json-schema", f, "-t", "1", "-s", fmt.Sprint(seed), "-n", "96", "-p", "Once upon a time"})
			if seed == 1 {
				t.Logf("%s: %q (%s)", j.Name, out, stopRe.FindString(stderr))
			}
			j.Outputs = append(j.Outputs, strings.TrimSuffix(out, "\n"))
		}
		jobs = append(jobs, j)
	}
	path := filepath.Join(t.TempDir(), "outputs.json")
	b, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "../../scripts/validate-json.mjs", path)
	res, err := cmd.CombinedOutput()
	t.Logf("ajv: %s", res)
	if err != nil {
		t.Errorf("ajv: %v", err)
	}
}
