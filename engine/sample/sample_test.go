package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var negInf = float32(math.Inf(-1))

func TestDefaultParams(t *testing.T) {
	p := DefaultParams()
	if p.Temperature != 0.8 || p.TopP != 0.9 || p.Seed != 42 || p.TopK != 0 || p.MinP != 0 {
		t.Fatalf("DefaultParams = %+v", p)
	}
}

func TestGreedy(t *testing.T) {
	s := New(6, Params{Temperature: 0})
	cases := []struct {
		logits []float32
		want   int
	}{
		{[]float32{1, 5, 3, 5, -2, 0}, 1}, // tie: lowest index
		{[]float32{-1, -5, -3, -0.5, -2, -9}, 3},
		{[]float32{negInf, negInf, -100, negInf, negInf, negInf}, 2},
		{[]float32{float32(math.NaN()), 1, 2, float32(math.NaN()), 0, 0}, 2},
		{[]float32{negInf, negInf, negInf, negInf, negInf, negInf}, 0}, // documented fallback
	}
	for _, c := range cases {
		if got := s.Sample(c.logits); got != c.want {
			t.Errorf("Sample(%v) = %d, want %d", c.logits, got, c.want)
		}
	}
	if got := Argmax(nil); got != 0 {
		t.Errorf("Argmax(nil) = %d", got)
	}
}

// reference computes the exact distribution the pipeline defines, the slow obvious way: a full sort.
func reference(logits []float32, p Params) []float64 {
	type tok struct {
		id int
		l  float32
	}
	var c []tok
	maxv := negInf
	for i, v := range logits {
		if v > negInf {
			c = append(c, tok{i, v})
			maxv = max(maxv, v)
		}
	}
	slices.SortFunc(c, func(a, b tok) int {
		if a.l != b.l {
			if a.l > b.l {
				return -1
			}
			return 1
		}
		return a.id - b.id
	})
	if p.TopK > 0 && p.TopK < len(c) {
		c = c[:p.TopK]
	}
	w := make([]float64, len(c))
	for i, t := range c {
		w[i] = float64(float32(math.Exp((float64(t.l) - float64(maxv)) / float64(p.Temperature))))
	}
	if p.MinP > 0 {
		n := 0
		for i := range c {
			if w[i] >= float64(p.MinP) || c[i].l == maxv {
				c[n], w[n] = c[i], w[i]
				n++
			}
		}
		c, w = c[:n], w[:n]
	}
	if p.TopP > 0 && p.TopP < 1 {
		var sum, acc float64
		for _, x := range w {
			sum += x
		}
		for i := range w {
			acc += w[i]
			if acc >= float64(p.TopP)*sum {
				c, w = c[:i+1], w[:i+1]
				break
			}
		}
	}
	out := make([]float64, len(logits))
	var sum float64
	for _, x := range w {
		sum += x
	}
	for i, t := range c {
		out[t.id] = w[i] / sum
	}
	return out
}

// TestDistribution draws many samples and compares frequencies with the exact distribution (a chi-square
// test), and checks that tokens outside the kept set are never drawn.
func TestDistribution(t *testing.T) {
	logits := []float32{2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, negInf, 3.0, 0.25, -2, -3}
	cases := []struct {
		name string
		p    Params
		kept int // expected size of the kept set
	}{
		{"temp1", Params{Temperature: 1}, 11},
		{"temp0.5", Params{Temperature: 0.5}, 11},
		{"temp3", Params{Temperature: 3}, 11},
		{"topk3", Params{Temperature: 1, TopK: 3}, 3},
		{"topk1", Params{Temperature: 1, TopK: 1}, 1},
		{"topp0.6", Params{Temperature: 1, TopP: 0.6}, 2},
		{"topp0.9", Params{Temperature: 1, TopP: 0.9}, 5},
		{"minp0.2", Params{Temperature: 1, MinP: 0.2}, 3},
		{"all", Params{Temperature: 0.8, TopK: 6, MinP: 0.05, TopP: 0.95}, 4},
		{"defaults", DefaultParams(), 4},
	}
	const draws = 200000
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := reference(logits, c.p)
			kept := 0
			for _, q := range want {
				if q > 0 {
					kept++
				}
			}
			if kept != c.kept {
				t.Fatalf("reference keeps %d tokens, want %d (%v)", kept, c.kept, want)
			}
			s := New(len(logits), c.p)
			count := make([]int, len(logits))
			for range draws {
				count[s.Sample(logits)]++
			}
			chi2 := 0.0
			for i, q := range want {
				if q == 0 {
					if count[i] != 0 {
						t.Errorf("token %d drawn %d times but is excluded", i, count[i])
					}
					continue
				}
				e := q * draws
				chi2 += (float64(count[i]) - e) * (float64(count[i]) - e) / e
			}
			// dof = kept-1 <= 10; the 99.99th percentile of chi2(10) is about 35.6.
			if chi2 > 36 {
				t.Errorf("chi2 = %.1f over %d tokens: counts %v, want probs %v", chi2, kept, count, want)
			}
		})
	}
}

// TestExclusionSets checks on random logit rows that the set of tokens that can be drawn is exactly the
// reference's kept set: every kept token is drawn at least once when its probability makes that near
// certain, and no excluded token is ever drawn.
func TestExclusionSets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		n := 2 + r.IntN(30)
		logits := make([]float32, n)
		for i := range logits {
			switch r.IntN(8) {
			case 0:
				logits[i] = negInf
			case 1:
				logits[i] = float32(r.IntN(3)) // ties
			default:
				logits[i] = float32(r.NormFloat64() * 2)
			}
		}
		p := Params{Temperature: float32(0.3 + r.Float64()*2), Seed: uint64(iter)}
		if r.IntN(2) == 0 {
			p.TopK = 1 + r.IntN(n)
		}
		if r.IntN(2) == 0 {
			p.TopP = float32(0.1 + 0.85*r.Float64())
		}
		if r.IntN(2) == 0 {
			p.MinP = float32(0.3 * r.Float64())
		}
		want := reference(logits, p)
		if slices.Max(want) == 0 {
			continue // everything masked
		}
		s := New(n, p)
		seen := make([]int, n)
		const draws = 10000
		for range draws {
			seen[s.Sample(logits)]++
		}
		for i, q := range want {
			if q == 0 && seen[i] > 0 {
				t.Fatalf("iter %d %+v: token %d (logit %v) is excluded but was drawn %d times\nlogits %v\nwant %v",
					iter, p, i, logits[i], seen[i], logits, want)
			}
			if q > 1.5e-3 && seen[i] == 0 {
				t.Fatalf("iter %d %+v: token %d (p=%.4f) never drawn\nlogits %v\nwant %v", iter, p, i, q, logits, want)
			}
		}
	}
}

func TestMaskedNeverPicked(t *testing.T) {
	const n = 1000
	logits := make([]float32, n)
	for i := range logits {
		logits[i] = negInf
	}
	allowed := []int{3, 500, 999}
	logits[3], logits[500], logits[999] = -50, 10, -1e30
	for _, temp := range []float32{0.01, 1, 100, 1e6, 1e30} {
		s := New(n, Params{Temperature: temp, Seed: 7})
		for range 5000 {
			id := s.Sample(logits)
			if !slices.Contains(allowed, id) {
				t.Fatalf("temperature %g: drew masked token %d", temp, id)
			}
		}
	}
	// A single allowed token is always chosen.
	one := make([]float32, n)
	for i := range one {
		one[i] = negInf
	}
	one[777] = -3
	s := New(n, DefaultParams())
	for range 100 {
		if id := s.Sample(one); id != 777 {
			t.Fatalf("drew %d, want the only allowed token 777", id)
		}
	}
}

func TestDeterminism(t *testing.T) {
	logits := randomLogits(32000, 3)
	run := func(seed uint64) []int {
		s := New(len(logits), Params{Temperature: 1, TopP: 0.95, Seed: seed})
		out := make([]int, 200)
		for i := range out {
			out[i] = s.Sample(logits)
		}
		return out
	}
	a, b, c := run(42), run(42), run(43)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different sequences")
	}
	if slices.Equal(a, c) {
		t.Fatal("seeds 42 and 43 gave the same sequence")
	}
	// Reset restarts the sequence.
	s := New(len(logits), Params{Temperature: 1, TopP: 0.95, Seed: 42})
	s.Sample(logits)
	s.Reset(42)
	for i := range 200 {
		if got := s.Sample(logits); got != a[i] {
			t.Fatalf("after Reset, draw %d = %d, want %d", i, got, a[i])
		}
	}
	// Seed 0 works.
	z := New(10, Params{Temperature: 1, Seed: 0})
	var distinct [10]bool
	for range 1000 {
		distinct[z.Sample(make([]float32, 10))] = true
	}
	for i, d := range distinct {
		if !d {
			t.Fatalf("seed 0: token %d never drawn from a uniform row", i)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	logits := randomLogits(32000, 5)
	for _, p := range []Params{
		{Temperature: 0},
		DefaultParams(),
		{Temperature: 1, TopK: 40, TopP: 0.9, MinP: 0.05, Seed: 1},
		{Temperature: 1.5, MinP: 0.1},
	} {
		s := New(len(logits), p)
		if a := testing.AllocsPerRun(100, func() { s.Sample(logits) }); a != 0 {
			t.Errorf("%+v: %v allocations per Sample", p, a)
		}
	}
}

func TestShortAndLongRows(t *testing.T) {
	s := New(4, DefaultParams())
	// Longer than the vocabulary: the tail is ignored.
	for range 100 {
		if id := s.Sample([]float32{negInf, negInf, 1, negInf, 100, 100}); id != 2 {
			t.Fatalf("drew %d from beyond the vocabulary", id)
		}
	}
	// Shorter: fine.
	if id := s.Sample([]float32{negInf, 0}); id != 1 {
		t.Fatalf("drew %d", id)
	}
	if id := New(0, DefaultParams()).Sample(nil); id != 0 {
		t.Fatalf("empty vocabulary: %d", id)
	}
}

func randomLogits(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, seed))
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	return l
}

func BenchmarkSample32k(b *testing.B) {
	logits := randomLogits(32000, 9)
	for _, bc := range []struct {
		name string
		p    Params
	}{
		{"greedy", Params{}},
		{"topp0.9", DefaultParams()},
		{"topk40", Params{Temperature: 0.8, TopK: 40, Seed: 1}},
		{"plain", Params{Temperature: 1, Seed: 1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(len(logits), bc.p)
			b.ReportAllocs()
			for b.Loop() {
				s.Sample(logits)
			}
		})
	}
}

func TestExpNeg(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(x float64) {
		got, want := float64(expNeg(x)), math.Exp(x)
		if float64(float32(want)) == 0 {
			if got != 0 && got > 2e-45 {
				t.Fatalf("expNeg(%v) = %v, want ~0", x, got)
			}
			return
		}
		// at most one float32 ulp apart (ties in the last bit can round either way)
		if math.Abs(got-want) > math.Abs(want)*1.2e-7 && math.Abs(got-want) > 1.5e-45 {
			t.Fatalf("expNeg(%v) = %v, want %v", x, got, want)
		}
	}
	for _, x := range []float64{0, -1e-300, -0.5, -0.6931471805599453, -1, -10, -87.3, -88, -100, -103.9, -104, -200, math.Inf(-1)} {
		check(x)
	}
	for range 1000000 {
		check(-r.Float64() * 110)
	}
	if expNeg(0) != 1 {
		t.Fatalf("expNeg(0) = %v, want exactly 1", expNeg(0))
	}
	if expNeg(math.NaN()) != 0 {
		t.Fatal("expNeg(NaN) != 0")
	}
}
