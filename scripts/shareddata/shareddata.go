// Package shareddata is the tests' way to the team's shared test data,
// ../shared/testdata beside the repository (real GGUF files and llama.cpp's
// references; see its PROVENANCE.md), and to the reference cases in it.
//
// The directory is found from the module root: the first directory holding
// go.mod at or above the working directory (go test runs a test in its
// package's directory). That works natively, under GOOS=js (Node's working
// directory) and under GOOS=wasip1 with scripts/wasip1-exec, which mounts the
// file system at / and passes PWD, from which Go's wasip1 port takes its
// working directory. A test that needs the data fails when it is missing:
// CI always has it.
package shareddata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared test data directory, failing t when it is missing.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := find()
	if err != nil {
		t.Fatalf("shareddata: %v", err)
	}
	return dir
}

// Path returns the file or directory rel (slash-separated, such as
// "synth/greedy.jsonl") in the shared test data, failing t when the data is
// missing. The file itself need not exist (tests of missing files use it).
func Path(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(Dir(t), filepath.FromSlash(rel))
}

// find returns ../shared/testdata beside the module root.
func find() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(root)
		if up == root {
			return "", fmt.Errorf("no go.mod at or above %s", wd)
		}
		root = up
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "testdata")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the shared test data is missing: want it in %s (../shared/testdata beside the repository; see DEVELOPERS.md)", dir)
	}
	return dir, nil
}

// Reference is one case of llama.cpp's greedy references: a line of
// reference/*.jsonl or synth/greedy.jsonl (engine/testdata/arch-refs.jsonl
// adds its model's spec; embed Reference to read it).
type Reference struct {
	Model        string    `json:"model"` // the model's file name
	Prompt       string    `json:"prompt"`
	NPredict     int       `json:"n_predict"`    // tokens generated
	PromptIDs    []int     `json:"prompt_ids"`   // llama.cpp's tokens of the prompt (BOS included)
	IDs          []int     `json:"ids"`          // the tokens it generated greedily
	Margins      []float64 `json:"margins"`      // its top-1 minus top-2 logit at each step
	Continuation string    `json:"continuation"` // the text it printed (ending in "\n"); "" where not recorded

	// File is the model's path: beside the JSONL file when it is there (the
	// synth models), else in the shared test data. References sets it.
	File string `json:"-"`
}

// References reads the reference cases of the shared file rel (such as
// "reference/stories260K-greedy.jsonl"), with File set.
func References(t testing.TB, rel string) []Reference {
	t.Helper()
	path := Path(t, rel)
	refs := ReadJSONL[Reference](t, path)
	for i := range refs {
		refs[i].File = filepath.Join(filepath.Dir(path), refs[i].Model)
		if _, err := os.Stat(refs[i].File); err != nil {
			refs[i].File = Path(t, refs[i].Model)
		}
	}
	return refs
}

// ReadJSONL reads a file of one JSON value per line (blank lines skipped)
// into []T. It fails t on a file it cannot read, a line that does not decode
// (naming the line) and a file without values.
func ReadJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return out
}
