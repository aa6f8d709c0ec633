//go:build goexperiment.simd

package quant

import "encoding/binary"

// kx86RowsConstRows is the number of rows of kx86RowsConsts.
const kx86RowsConstRows = 35

// The AVX2 DotRows kernels of Q2_K, Q3_K, Q5_K, IQ4_XS, Q5_0, Q5_1 and Q4_1
// (kernels_amd64.go), the formats summed in ggml's x86 order:
// Dot per row in hand-written assembly (kx86_rows_amd64.s), as Q4_K's and
// Q6_K's are (dotrows_amd64.go): a row's eight float32 lanes are the
// reference's running sums already, so rows in lanes would share nothing;
// what the assembly saves is dotQ5_KAVX2's per-block calls and spills.

// kx86RowsConsts are the constants of q2_KRows, q3_KRows, q5_KRows and
// iq4_XSRows (their offsets are in kx86_rows_amd64.s): the VPSHUFB
// patterns putting byte k in every int16 lane (k < 8), q4KMinShuffle, 0x0f
// bytes, bytes 1<<b (b < 8), q6KScaleShuffle, 0x03 bytes, 0x20 bytes,
// iq4Levels, the VPSHUFB patterns putting int16 lane k in every int16 lane
// (k < 8), and the masks of iq4_XSRows's bit spreading (one per qword).
var kx86RowsConsts = func() (t [kx86RowsConstRows][32]byte) {
	for k := range 8 {
		for i := range 16 {
			t[k][2*i], t[k][2*i+1] = byte(k), 0xff
		}
		for i := range 32 {
			t[10+k][i] = 1 << k
		}
	}
	for i, v := range q4KMinShuffle {
		t[8][i] = byte(v)
	}
	for k := range 4 {
		for i, v := range q6KScaleShuffle[k] {
			t[18+k][i] = byte(v)
		}
	}
	for i := range 32 {
		t[9][i], t[22][i], t[23][i] = 0x0f, 0x03, 0x20
		t[24][i] = byte(iq4Levels[i])
	}
	for k := range 8 {
		for i := range 16 {
			t[25+k][2*i], t[25+k][2*i+1] = byte(2*k), byte(2*k+1)
		}
	}
	for i, m := range [4]uint64{0x0000ffff0000ffff, 0x00ff00ff00ff00ff, 0x0f0f0f0f0f0f0f0f, 0x000000ff000000ff} {
		binary.LittleEndian.PutUint64(t[33][8*i:], m)
	}
	for i, m := range [2]uint64{0x000f000f000f000f, 0x0303030303030303} {
		binary.LittleEndian.PutUint64(t[34][8*i:], m)
	}
	return t
}()

// q5_KRows, q3_KRows, q2_KRows and iq4_XSRows set out[r] to the dot of row r of the
// rows at w (nb blocks each) with the Q8_K activation y, for r < rows.
//
//go:noescape
func q5_KRows(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte)

//go:noescape
func q3_KRows(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte)

//go:noescape
func iq4_XSRows(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte)

//go:noescape
func q2_KRows(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte)

// kx86Rows runs rows (one of the four above) over the len(out) rows of w,
// blocks of size bytes, against act; dot is the format's Dot, for rows of
// no blocks.
func kx86Rows(rows func(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte), dot func(n int, w, act []byte) float32, size, n int, w, act []byte, out []float32) {
	nb := n / qkK
	if nb == 0 || len(out) == 0 {
		dotRows(dot, n, nb*size, w, act, out)
		return
	}
	w, act = w[:len(out)*nb*size], act[:nb*q8_KBytes]
	rows(nb, &w[0], &act[0], &out[0], len(out), &kx86RowsConsts)
}

func dotRowsQ5_KAVX2(n int, w, act []byte, out []float32) {
	kx86Rows(q5_KRows, dotQ5_KAVX2, q5_KBytes, n, w, act, out)
}

func dotRowsQ3_KAVX2(n int, w, act []byte, out []float32) {
	kx86Rows(q3_KRows, dotQ3_KAVX2, q3_KBytes, n, w, act, out)
}

func dotRowsQ2_KAVX2(n int, w, act []byte, out []float32) {
	kx86Rows(q2_KRows, dotQ2_KAVX2, q2_KBytes, n, w, act, out)
}

func dotRowsIQ4_XSAVX2(n int, w, act []byte, out []float32) {
	kx86Rows(iq4_XSRows, dotIQ4_XSAVX2, iq4_XSBytes, n, w, act, out)
}

// q5RowsConsts are the constants of q5_0Rows, q5_1Rows and q4_1Rows: 0x0f
// bytes, q5Spread, q5Bits, 16 bytes, int16 ones.
var q5RowsConsts = func() (t [5][32]byte) {
	for i := range 32 {
		t[0][i], t[1][i], t[2][i], t[3][i] = 0x0f, byte(q5Spread[i]), q5Bits[i], 16
		t[4][i] = byte(1 - i%2)
	}
	return t
}()

// q5_0Rows, q5_1Rows and q4_1Rows set out[r] to the dot of row r of the
// rows at w (nb blocks each) with the activation y (Q8_0, Q8_1), for
// r < rows.
//
//go:noescape
func q5_0Rows(nb int, w, y *byte, out *float32, rows int, k *[5][32]byte)

//go:noescape
func q5_1Rows(nb int, w, y *byte, out *float32, rows int, k *[5][32]byte)

//go:noescape
func q4_1Rows(nb int, w, y *byte, out *float32, rows int, k *[5][32]byte)

// q5Rows runs rows (one of the three above) over the len(out) rows of w,
// blocks of size bytes, against act (blocks of asize bytes); dot is the
// format's Dot, for rows of no blocks.
func q5Rows(rows func(nb int, w, y *byte, out *float32, rows int, k *[5][32]byte), dot func(n int, w, act []byte) float32, size, asize, n int, w, act []byte, out []float32) {
	nb := n / qk
	if nb == 0 || len(out) == 0 {
		dotRows(dot, n, nb*size, w, act, out)
		return
	}
	w, act = w[:len(out)*nb*size], act[:nb*asize]
	rows(nb, &w[0], &act[0], &out[0], len(out), &q5RowsConsts)
}

func dotRowsQ5_0AVX2(n int, w, act []byte, out []float32) {
	q5Rows(q5_0Rows, dotQ5_0AVX2, q5_0Bytes, q8_0Bytes, n, w, act, out)
}

func dotRowsQ5_1AVX2(n int, w, act []byte, out []float32) {
	q5Rows(q5_1Rows, dotQ5_1AVX2, q5_1Bytes, q8_1Bytes, n, w, act, out)
}

func dotRowsQ4_1AVX2(n int, w, act []byte, out []float32) {
	q5Rows(q4_1Rows, dotQ4_1AVX2, q4_1Bytes, q8_1Bytes, n, w, act, out)
}

// q5_0Dot4, q5_1Dot4 and q4_1Dot4 set out[k] to the dot of the row at w
// (nb ≥ 1 blocks) with the activation y[k] (Q8_0, Q8_1), k < 4.
//
//go:noescape
func q5_0Dot4(nb int, w *byte, y *[4]*byte, out *[4]float32, k *[5][32]byte)

//go:noescape
func q5_1Dot4(nb int, w *byte, y *[4]*byte, out *[4]float32, k *[5][32]byte)

//go:noescape
func q4_1Dot4(nb int, w *byte, y *[4]*byte, out *[4]float32, k *[5][32]byte)
