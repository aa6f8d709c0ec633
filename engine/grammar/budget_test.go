package grammar

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestTinyBudgets: with 1 to 4 tokens, every generation the mask allows ends in one complete valid JSON
// value, on both test models' vocabularies. With 1 token and no "{}" or "[]" token (stories260K) that
// value is a bare one (a digit); with "{}" (Llama 2's 32k vocabulary) and from 2 tokens on it is an object
// or array. --json -n 1 used to print "[" or "{".
func TestTinyBudgets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		objCost int // tokens of the shortest object or array in this vocabulary
	}{{"stories260K.gguf", 2}, {"llama-2-tiny-random.gguf", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			pieces, eos, err := readSPMVocab(shareddata.Path(t, tc.name))
			if err != nil {
				t.Skip(err)
			}
			g := NewJSON(pieces, eos)
			st := g.Start()
			if g.ClosingCost(&st) != 1 || g.objCost != tc.objCost {
				t.Fatalf("start cost %d, object cost %d; want 1 and %d", g.ClosingCost(&st), g.objCost, tc.objCost)
			}
			logits := make([]float32, len(pieces))
			// Budget 1: every token allowed at the start is a whole value by itself.
			g.Mask(&st, logits, 1)
			var one []string
			for _, id := range allowedSet(logits) {
				s := st
				if err := g.Accept(&s, id); err != nil || !s.Complete() || !json.Valid(pieces[id]) {
					t.Fatalf("budget 1 allows %q: %v, complete %v", pieces[id], err, s.Complete())
				}
				if v := bytes.TrimLeft(pieces[id], " \t\r\n"); tc.objCost == 1 && v[0] != '{' && v[0] != '[' {
					t.Fatalf("budget 1 allows the bare %q though an object or array fits", pieces[id])
				}
				one = append(one, string(pieces[id]))
			}
			if len(one) == 0 {
				t.Fatal("nothing allowed with a budget of 1")
			}
			t.Logf("budget 1: %d tokens allowed, e.g. %q", len(one), one[:min(len(one), 12)])
			// Budgets 1-4: random walks through what the mask allows.
			r := rand.New(rand.NewPCG(13, uint64(len(pieces))))
			for budget := 1; budget <= 4; budget++ {
				for walk := range 300 {
					st := g.Start()
					var out []byte
					n := 0
					for ; n < budget && !st.Done(); n++ {
						for i := range logits {
							logits[i] = 0
						}
						g.Mask(&st, logits, budget-n)
						ids := allowedSet(logits)
						if len(ids) == 0 {
							t.Fatalf("budget %d walk %d: nothing allowed after %q", budget, walk, out)
						}
						id := ids[r.IntN(len(ids))]
						if id == eos {
							break
						}
						if err := g.Accept(&st, id); err != nil {
							t.Fatal(err)
						}
						out = append(out, pieces[id]...)
					}
					if !st.Complete() || !json.Valid(out) {
						t.Fatalf("budget %d walk %d: %q in %d tokens is not complete JSON", budget, walk, out, n)
					}
					if v := bytes.TrimLeft(out, " \t\r\n"); budget >= tc.objCost && v[0] != '{' && v[0] != '[' {
						t.Fatalf("budget %d walk %d: %q is not an object or array", budget, walk, out)
					}
				}
			}
		})
	}
}

// TestNoValueFits: a vocabulary in which no value can be completed says so through ClosingCost at the
// start (the engine refuses to generate); one whose only complete value takes 3 tokens costs 3.
func TestNoValueFits(t *testing.T) {
	g := NewJSON([][]byte{nil, []byte("a"), []byte("{"), []byte("x")}, 0)
	st := g.Start()
	if c := g.ClosingCost(&st); c != infCost {
		t.Fatalf("ClosingCost = %d, want infCost", c)
	}
	g = NewJSON([][]byte{nil, []byte("a"), []byte("{"), []byte("}"), []byte(" "), []byte(`"`)}, 0)
	if c := g.ClosingCost(&st); c != 2 {
		t.Fatalf("ClosingCost = %d, want 2 ({ then })", c)
	}
	g = NewJSON([][]byte{nil, []byte("a"), []byte(`"`)}, 0)
	if c := g.ClosingCost(&st); c != 2 {
		t.Fatalf("ClosingCost = %d, want 2 (\" then \")", c)
	}
	logits := make([]float32, 3)
	g.Mask(&st, logits, 2)
	if ids := allowedSet(logits); len(ids) != 1 || ids[0] != 2 {
		t.Fatalf("allowed %v, want the quote", ids)
	}
}
