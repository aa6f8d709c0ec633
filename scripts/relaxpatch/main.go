// Command relaxpatch fixes the relaxed-SIMD instructions of a wasm module
// built by Go (the relaxedsimd build of quant's kernels, see
// quant/relaxed_wasm.h), whose assembler encodes them wrongly:
//
//	relaxpatch [-pkg ./quant] [-tags relaxedsimd] IN.wasm OUT.wasm
//
// Go 1.27's wasm assembler writes a relaxed op (opcode 0xFD 0x100+k, k the
// op's index, at most 0x13) as FD, uleb128(0x80+k), 02: for the relaxed dot
// FD 93 01 02 where FD 93 02 is right. quant's kernels put a marker
// (i64.const 0x52454c4158454421 "RELAXED!"; drop) before each relaxed op;
// relaxpatch finds each marker in the code section, checks that the wrong
// encoding follows it, and rewrites exactly those bytes: the marker becomes
// nops and the op FD 93 02 and a nop (01), so the module keeps its size and
// every offset. It refuses to write OUT when a marker is not followed by
// the wrong encoding (a toolchain that encodes them right needs no patch),
// when a relaxed instruction in pkg's assembly for GOOS=js GOARCH=wasm
// GOEXPERIMENT=simd with tags is not right after a marker (checked in the
// assembler's listing, after macro expansion), or when the module has no
// marker or more markers than that assembly has relaxed instructions (it
// may have fewer: the linker leaves out the functions a program does not
// call).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// markerValue is the constant of the marker, i64.const markerValue; drop
// (quant/relaxed_wasm.h).
const markerValue = 0x52454c4158454421

// lastRelaxed is the index of the last relaxed op
// (i32x4.relaxed_dot_i8x16_i7x16_add_s, 0xFD 0x113).
const lastRelaxed = 0x13

// marker returns the bytes of the marker: i64.const (0x42) with its
// signed LEB128 immediate, then drop (0x1A).
func marker() []byte {
	b := []byte{0x42}
	v := int64(markerValue)
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			b = append(b, c)
			break
		}
		b = append(b, c|0x80)
	}
	return append(b, 0x1A)
}

var (
	errNotWasm  = errors.New("not a wasm module")
	errNoCode   = errors.New("the module has no code section")
	errEncoding = errors.New("a marker is not followed by Go's wrong encoding of a relaxed op (a toolchain that encodes them right needs no patch: drop this step)")
	errCount    = errors.New("the number of markers is not between 1 and the number of relaxed instructions in the assembly")
	errUnmarked = errors.New("a relaxed instruction without a marker before it")
)

// codeSection returns the offsets of the code section's payload in mod.
func codeSection(mod []byte) (start, end int, err error) {
	if len(mod) < 8 || !bytes.Equal(mod[:8], []byte{0, 'a', 's', 'm', 1, 0, 0, 0}) {
		return 0, 0, errNotWasm
	}
	for p := 8; p < len(mod); {
		id := mod[p]
		size, n := uleb(mod[p+1:])
		if n == 0 || size > uint64(len(mod)-p-1-n) {
			return 0, 0, fmt.Errorf("%w: section at %d runs past the end", errNotWasm, p)
		}
		start, end = p+1+n, p+1+n+int(size)
		if id == 10 {
			return start, end, nil
		}
		p = end
	}
	return 0, 0, errNoCode
}

// uleb decodes an unsigned LEB128 number of at most 5 bytes: the value
// and its length, 0 if malformed.
func uleb(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 5; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// patch rewrites every marked relaxed op of mod's code section in place
// and returns how many it rewrote.
func patch(mod []byte) (int, error) {
	start, end, err := codeSection(mod)
	if err != nil {
		return 0, err
	}
	m := marker()
	n := 0
	for p := start; ; {
		i := bytes.Index(mod[p:end], m)
		if i < 0 {
			return n, nil
		}
		at := p + i
		op := mod[at+len(m) : min(at+len(m)+4, end)]
		if len(op) < 4 || op[0] != 0xFD || op[1]&0x80 == 0 || op[1]&0x7f > lastRelaxed || op[2] != 0x01 || op[3] != 0x02 {
			return n, fmt.Errorf("%w: at byte %d: % x", errEncoding, at+len(m), op)
		}
		for k := range m {
			mod[at+k] = 0x01 // nop
		}
		op[2], op[3] = 0x02, 0x01 // uleb128(0x100+k), then a nop
		n++
		p = at + len(m) + 4
	}
}

// relaxedOp matches a relaxed instruction in the assembler's listing;
// markerConst and dropOp the marker's two instructions.
var (
	relaxedOp   = regexp.MustCompile(`\t(I8x16|I16x8|I32x4|I64x2|F32x4|F64x2)Relaxed\w*`)
	markerConst = regexp.MustCompile(fmt.Sprintf(`\tI64Const\t\$%d$`, markerValue))
	dropOp      = regexp.MustCompile(`\tDrop$`)
)

// markedCount returns the number of relaxed instructions in pkg's assembly
// files for GOOS=js GOARCH=wasm GOEXPERIMENT=simd and the build tags, and
// errUnmarked (naming the line) for one that does not come right after a
// marker.
func markedCount(pkg, tags string) (int, error) {
	env := append(os.Environ(), "GOOS=js", "GOARCH=wasm", "GOEXPERIMENT=simd")
	list := exec.Command("go", "list", "-tags", tags, "-f", "{{.Dir}}\n{{.ImportPath}}\n{{join .SFiles \"\\n\"}}", pkg)
	list.Env, list.Stderr = env, os.Stderr
	out, err := list.Output()
	if err != nil {
		return 0, fmt.Errorf("go list %s: %w", pkg, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		return 0, fmt.Errorf("%s has no assembly files with tags %q", pkg, tags)
	}
	dir, path := lines[0], lines[1]
	goroot := exec.Command("go", "env", "GOROOT")
	goroot.Env = env
	root, err := goroot.Output()
	if err != nil {
		return 0, fmt.Errorf("go env GOROOT: %w", err)
	}
	tmp, err := os.MkdirTemp("", "relaxpatch")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	count := 0
	for _, f := range lines[2:] {
		asm := exec.Command("go", "tool", "asm", "-p", path, "-I", dir, "-I", filepath.Join(strings.TrimSpace(string(root)), "pkg", "include"),
			"-D", "GOOS_js", "-D", "GOARCH_wasm", "-S", "-o", filepath.Join(tmp, "a.o"), filepath.Join(dir, f))
		asm.Env, asm.Stderr = env, os.Stderr
		out, err := asm.Output()
		if err != nil {
			return 0, fmt.Errorf("go tool asm %s: %w", f, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		var prev [2]string // the two instructions before this one
		for sc.Scan() {
			line := sc.Text()
			if relaxedOp.MatchString(line) {
				if !markerConst.MatchString(prev[0]) || !dropOp.MatchString(prev[1]) {
					return 0, fmt.Errorf("%w: %s", errUnmarked, strings.TrimSpace(line))
				}
				count++
			}
			if strings.HasPrefix(line, "\t0x") {
				prev[0], prev[1] = prev[1], line
			}
		}
	}
	return count, nil
}

func main() {
	pkg := flag.String("pkg", "./quant", "the `PACKAGE` whose assembly holds the relaxed instructions")
	tags := flag.String("tags", "relaxedsimd", "its build `TAGS`")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: relaxpatch [-pkg ./quant] [-tags relaxedsimd] IN.wasm OUT.wasm")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *pkg, *tags); err != nil {
		fmt.Fprintln(os.Stderr, "relaxpatch:", err)
		os.Exit(1)
	}
}

func run(in, out, pkg, tags string) error {
	most, err := markedCount(pkg, tags)
	if err != nil {
		return err
	}
	mod, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	n, err := patch(mod)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if n == 0 || n > most {
		return fmt.Errorf("%s: %w: %d markers, %d relaxed instructions in %s (tags %s)", in, errCount, n, most, pkg, tags)
	}
	if err := os.WriteFile(out, mod, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "relaxpatch: %s: %d relaxed instructions rewritten\n", out, n)
	return nil
}
