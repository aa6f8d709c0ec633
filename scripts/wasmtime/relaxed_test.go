package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRelaxedSIMDTwins: quant's relaxed-SIMD kernels (-tags relaxedsimd,
// the browser's worker-relaxed.wasm engine) built for GOOS=wasip1 and
// patched by scripts/relaxpatch give the bits of their portable twins under
// wasmtime, with relaxed SIMD lowered to the host's instructions (wasmtime's
// default, pmaddubsw on x86) and in its deterministic mode: the second
// operand of their i16x8.relaxed_dot_i8x16_i7x16_s is Q4_K's nibbles (0..15)
// or Q6_K's unsigned quants (0..63), where the op has one result and no
// pair sum reaches int16 saturation. The unpatched module (Go's wrong
// encoding of the relaxed ops) does not compile.
func TestRelaxedSIMDTwins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds quant's tests for wasip1")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	raw, patched := filepath.Join(dir, "quant-relaxed.raw.wasm"), filepath.Join(dir, "quant-relaxed.wasm")
	build := exec.Command("go", "test", "-c", "-tags", "relaxedsimd", "-o", raw, "./quant")
	build.Dir = root
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOEXPERIMENT=simd", "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c -tags relaxedsimd ./quant (wasip1): %v\n%s", err, b)
	}
	patch := exec.Command("go", "run", "./scripts/relaxpatch", raw, patched)
	patch.Dir = root
	patch.Env = append(os.Environ(), "GOOS=", "GOARCH=", "GOEXPERIMENT=")
	if b, err := patch.CombinedOutput(); err != nil {
		t.Fatalf("relaxpatch: %v\n%s", err, b)
	}

	if _, stderr, code := runner(t, dir, "", nil, raw); code != exitFail || !strings.Contains(stderr, raw) {
		t.Errorf("the unpatched module: exit %d, stderr %q; want it refused", code, stderr)
	}
	// web/test/relaxed.test.mjs's list without TestDotScalesAllFP16 (every
	// fp16 scale through every kernel's float part, which the relaxed
	// kernels share with SIMD128; 75 of the 105 s under wasmtime here).
	tests := "^(TestKernelTables|TestTableTwins|TestDotTwinsRandom|TestDotNRandom|TestDotTwinsManyBlocks|TestMatVecTwins|TestMatVec)$"
	for _, mode := range []string{"relaxed-simd=y", "relaxed-simd=y,relaxed-simd-deterministic=y"} {
		stdout, stderr, code := runner(t, dir, "", nil, "run", "-W", mode, "--dir", "/::/", "--env", "PWD="+filepath.Join(root, "quant"),
			patched, "-test.v", "-test.run", tests)
		out := stdout + stderr
		if code != 0 {
			t.Errorf("-W %s: exit %d\n%s", mode, code, tail(out))
			continue
		}
		for _, re := range []string{
			`platform tables: SIMD128, relaxed SIMD\n`,
			`--- PASS: TestTableTwins/relaxed_SIMD/Q4_K `,
			`--- PASS: TestTableTwins/relaxed_SIMD/Q6_K `,
			`--- PASS: TestDotTwinsRandom/Go\+SIMD128\+relaxed_SIMD `,
			`--- PASS: TestMatVecTwins`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("-W %s: no %q in\n%s", mode, re, tail(out))
			}
		}
		if m := regexp.MustCompile(`--- (FAIL|SKIP): .*relaxed.*`).FindString(out); m != "" {
			t.Errorf("-W %s: %s", mode, m)
		}
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}
