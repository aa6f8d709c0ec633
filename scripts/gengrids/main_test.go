package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedUpToDate regenerates quant/grids_gen.go in memory from
// grids.json and requires the committed file to be identical, so the
// tables cannot drift from the data (run `go generate ./quant` to fix).
func TestGeneratedUpToDate(t *testing.T) {
	root, data := readInput(t)
	want, err := Generate(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "quant", "grids_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("quant/grids_gen.go is stale: run `go generate ./quant`")
	}
	if !bytes.HasPrefix(got, []byte("// Code generated ")) || !strings.Contains(string(got[:200]), "DO NOT EDIT.") {
		t.Fatal("quant/grids_gen.go lacks the generated-code header")
	}
}

// TestGenerateRejectsBadData checks that a corrupt grid value fails.
func TestGenerateRejectsBadData(t *testing.T) {
	_, data := readInput(t)
	for _, c := range []struct{ from, to string }{
		{`"QK_K": 256`, `"QK_K": 128`},
		{`"kvalues_iq4nl": [-127,`, `"kvalues_iq4nl": [-200,`},
		{`"ksigns_iq2xs": [0,129`, `"ksigns_iq2xs": [1,129`},
		{`"kmask_iq2xs": [1,2`, `"kmask_iq2xs": [1,3`},
	} {
		bad := strings.Replace(string(data), c.from, c.to, 1)
		if bad == string(data) {
			t.Fatalf("test data lacks %q", c.from)
		}
		if _, err := Generate([]byte(bad)); err == nil {
			t.Errorf("Generate accepted %q", c.to)
		}
	}
	// A grid byte outside its set: 578721382704613384 is 0x0808080808080808;
	// change the first iq2xxs_grid entry to 0x0808080808080809.
	i := strings.Index(string(data), `"iq2xxs_grid": ["`)
	if i < 0 {
		t.Fatal("no iq2xxs_grid")
	}
	j := i + len(`"iq2xxs_grid": ["`)
	k := j + strings.IndexByte(string(data[j:]), '"')
	bad := string(data[:j]) + "578721382704613385" + string(data[k:])
	if _, err := Generate([]byte(bad)); err == nil {
		t.Error("Generate accepted a grid byte of 9")
	}
}

// readInput returns the repository root and the committed grids.json.
func readInput(t *testing.T) (root string, data []byte) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(DefaultInput(root))
	if err != nil {
		t.Fatal(err)
	}
	return root, data
}
