package grammar

import (
	"errors"
	"fmt"
	"testing"
)

// The cache compiles a key once, keeps the Size most recently used, drops
// grammars over MaxElems and keeps no errors.
func TestCache(t *testing.T) {
	c := &Cache{Size: 2, MaxElems: 1 << 10}
	compiles := 0
	get := func(key, src string) *GBNF {
		t.Helper()
		g, err := c.Get(key, func() (*GBNF, error) { compiles++; return ParseGBNF(src) })
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a := get("a", `root ::= "a"`)
	if get("a", `root ::= "a"`) != a || compiles != 1 {
		t.Fatalf("a twice: %d compiles", compiles)
	}
	get("b", `root ::= "b"`)
	get("a", `root ::= "a"`) // a is now the most recent: c drops b
	get("c", `root ::= "c"`)
	if _, ok := c.Lookup("b"); ok || c.Len() != 2 {
		t.Errorf("b kept (len %d)", c.Len())
	}
	if _, ok := c.Lookup("a"); !ok {
		t.Error("a dropped")
	}
	_, err := c.Get("bad", func() (*GBNF, error) { return ParseGBNF(`root ::= nowhere`) })
	if !errors.Is(err, ErrGrammar) {
		t.Fatal(err)
	}
	if _, ok := c.Lookup("bad"); ok {
		t.Error("an error kept")
	}
	big := fmt.Sprintf(`root ::= [a-z]{%d}`, 2000)
	get("big", big)
	if _, ok := c.Lookup("big"); ok {
		t.Error("a grammar over MaxElems kept")
	}
	var zero Cache
	zero.Put("x", a)
	if zero.Len() != 0 {
		t.Error("the zero cache keeps grammars")
	}
}
