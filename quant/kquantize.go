package quant

import "math"

// Scale searches shared by ggml's reference K-quant quantisers
// (quantize_row_q{2..6}_K_ref). They are ports of make_qkx2_quants,
// make_qx_quants and make_q3_quants with ggml's float32 operation order:
// every product that is added to something is rounded first (float32(...))
// so that no compiler fuses it into an FMA, which would change the bytes.

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it quantises to zeros.
const groupMaxEps = 1e-15

// sqrtf is C's sqrtf (float64 sqrt rounded to float32 is correctly rounded).
func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// makeQKX2Quants fits x ≈ scale*L - min with L in [0, nmax], minimising the
// weighted squared (or absolute, if useMad) error over nstep+1 candidate
// scales. It returns scale and min (min >= 0); L receives the quants and
// laux is scratch of len(x).
func makeQKX2Quants(nmax int32, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int, useMad bool) (scale, theMin float32) {
	n := len(x)
	vmin, vmax := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		if x[i] < vmin {
			vmin = x[i]
		}
		if x[i] > vmax {
			vmax = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if vmin > 0 {
		vmin = 0
	}
	if vmax == vmin {
		clear(L[:n])
		return 0, -vmin
	}
	errorOf := func(diff float32) float32 {
		if useMad {
			return absf(diff)
		}
		return diff * diff
	}
	iscale := float32(nmax) / (vmax - vmin)
	scale = 1 / iscale
	var bestError float32
	for i := range n {
		l := nearestInt(iscale * (x[i] - vmin))
		L[i] = uint8(max(0, min(nmax, l)))
		diff := float32(float32(scale*float32(L[i]))+vmin) - x[i]
		bestError += float32(weights[i] * errorOf(diff))
	}
	if nstep < 1 {
		return scale, -vmin
	}
	for is := 0; is <= nstep; is++ {
		iscale = (float32(rmin+float32(rdelta*float32(is))) + float32(nmax)) / (vmax - vmin)
		var sumL, sumL2, sumXL float32
		for i := range n {
			l := max(0, min(nmax, nearestInt(iscale*(x[i]-vmin))))
			laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := range n {
				diff := float32(float32(thisScale*float32(laux[i]))+thisMin) - x[i]
				curError += float32(weights[i] * errorOf(diff))
			}
			if curError < bestError {
				copy(L[:n], laux[:n])
				bestError = curError
				scale, vmin = thisScale, thisMin
			}
		}
	}
	return scale, -vmin
}

// makeQXQuants is ggml's make_qx_quants for rmseType 1 with no importance
// weights (w = x²): symmetric quants L in [0, 2*nmax) (offset by nmax),
// the best of 19 candidate scales by weighted least squares.
func makeQXQuants(nmax int32, x []float32, L []int8) float32 {
	n := len(x)
	var vmax, amax float32
	for _, v := range x {
		if ax := absf(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:n])
		return 0
	}
	fnmax := float32(nmax)
	iscale := -fnmax / vmax
	var sumlx, suml2 float32
	for i, v := range x {
		l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
		L[i] = int8(l + nmax)
		w, fl := v*v, float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fnmax + float32(0.1*float32(is))) / vmax
		sumlx, suml2 = 0, 0
		for _, v := range x {
			l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
			w, fl := v*v, float32(l)
			sumlx += float32(w * v * fl)
			suml2 += float32(w * fl * fl)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i, v := range x {
				l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
				L[i] = int8(nmax + l)
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse: symmetric quants in
// [-nmax, nmax) refined by up to 5 passes of coordinate descent on the
// x²-weighted error; L receives l+nmax.
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	n := len(x)
	var vmax, amax float32
	for _, v := range x {
		if ax := absf(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:n])
		return 0
	}
	iscale := -float32(nmax) / vmax
	var sumlx, suml2 float32
	for i, v := range x {
		l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
		L[i] = int8(l)
		w, fl := v*v, float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	for range 5 {
		changed := 0
		for i, v := range x {
			w, fl := v*v, float32(L[i])
			slx := sumlx - float32(w*v*fl)
			if slx > 0 {
				sl2 := suml2 - float32(w*fl*fl)
				newL := max(-nmax, min(nmax-1, nearestInt(v*sl2/slx)))
				if newL != int32(L[i]) {
					fn := float32(newL)
					slx += float32(w * v * fn)
					sl2 += float32(w * fn * fn)
					if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
						L[i] = int8(newL)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range n {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// packQ2Bits stores 256 2-bit values L (each < 4) the way Q2_K and Q3_K
// do: value 128*h + 32*s + l goes to bits 2s..2s+1 of qs[32*h + l].
func packQ2Bits(qs []byte, L []uint8) {
	for h := range 2 {
		for l := range 32 {
			j := 128*h + l
			qs[32*h+l] = L[j] | L[j+32]<<2 | L[j+64]<<4 | L[j+96]<<6
		}
	}
}
