package sample

import "math"

// exp2Table[j] = 2^(j/64), j = 0..63: a generated constant table.
var exp2Table = func() (t [64]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return t
}()

// expNeg returns e^x for x <= 0 as a float32: to within about 1e-13 relative before the final rounding to
// float32 (so it equals float32(math.Exp(x)) but for rare last-bit ties), several times faster than
// math.Exp. Values whose result underflows float32 (x < -104) give 0.
//
// e^x = 2^(k/64) * e^r with k = round(64 x / ln2) and |r| <= ln2/128; 2^(k/64) = 2^(k>>6) * exp2Table[k&63]
// and e^r by its Taylor polynomial to degree 5 (truncation error below 3e-16 on that interval).
func expNeg(x float64) float32 {
	if !(x >= -104) { // also NaN
		return 0
	}
	const (
		k64   = 64 / math.Ln2
		ln2hi = 6.93147180369123816490e-01 / 64 // ln2/64 split so k*ln2hi is exact (as fdlibm)
		ln2lo = 1.90821492927058770002e-10 / 64
	)
	k := math.Floor(x*k64 + 0.5) // in [-9601, 0]
	r := (x - k*ln2hi) - k*ln2lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120)))))
	ki := int64(k)
	// 2^(ki>>6) for ki>>6 in [-151, 0] is a normal float64: build it from its exponent bits.
	scale := math.Float64frombits(uint64(ki>>6+1023) << 52)
	return float32(p * exp2Table[ki&63] * scale)
}
