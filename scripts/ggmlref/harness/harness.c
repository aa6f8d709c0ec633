// The C side of scripts/ggmlref (a directory of its own: Go builds no C without cgo): loads a built libggml-cpu-*.so (node-llama-cpp's
// prebuilt CPU variants, for one) and runs its exported kernels on records read from
// stdin, writing the results to stdout. See README.md.
//
//   harness LIB.so vec_dot_q6_K_q8_K   [int32 n][int32 wbytes][int32 abytes][w][a] -> float32
//   harness LIB.so quantize_row_q8_K   [int32 n][n float32]                         -> n/256*292 bytes
//   harness LIB.so soft_max            [int32 n][n float32]  -> n float32, float64 sum (max = 0)
//   harness LIB.so swiglu              [int32 n][n float32]  -> n float32 (g = 1)
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*dot_fn)(int, float *, size_t, const void *, size_t, const void *, size_t, int);
typedef void (*quant_fn)(const float *, void *, int64_t);
typedef double (*softmax_fn)(int, float *, const float *, float);
typedef void (*swiglu_fn)(int, float *, const float *, const float *);

#define MAXN (1 << 24)

static int readn(void *p, size_t size, size_t n) { return fread(p, size, n, stdin) == n; }

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: harness LIB.so KERNEL\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void (*init)(void) = (void (*)(void))dlsym(h, "ggml_cpu_init"); // the fp16 tables
	if (init) init();
	char name[128];
	snprintf(name, sizeof name, "ggml_%s", argv[2]);
	void *f = dlsym(h, name);
	if (!f) f = dlsym(h, argv[2]);
	if (!f) {
		fprintf(stderr, "%s has no %s\n", argv[1], argv[2]);
		return 1;
	}
	float *x = malloc(4 * (size_t)MAXN), *y = malloc(4 * (size_t)MAXN), *g = malloc(4 * (size_t)MAXN);
	unsigned char *a = malloc(4 * (size_t)MAXN);
	if (!x || !y || !g || !a) return 1;
	for (int i = 0; i < MAXN; i++) g[i] = 1.0f;
	int32_t hdr[3];
	while (readn(hdr, 4, 1)) {
		int32_t n = hdr[0];
		if (n < 0 || n > MAXN) return 1;
		if (strstr(argv[2], "vec_dot")) {
			if (!readn(hdr + 1, 4, 2) || hdr[1] < 0 || hdr[2] < 0 || hdr[1] > 4 * MAXN || hdr[2] > 4 * MAXN) return 1;
			if (!readn(x, 1, hdr[1]) || !readn(a, 1, hdr[2])) return 1;
			float s;
			((dot_fn)f)(n, &s, 0, x, 0, a, 0, 1);
			fwrite(&s, 4, 1, stdout);
			continue;
		}
		if (!readn(x, 4, n)) return 1;
		if (strstr(argv[2], "quantize_row_q8_K")) {
			((quant_fn)f)(x, a, n);
			fwrite(a, 1, (size_t)n / 256 * 292, stdout);
		} else if (strstr(argv[2], "soft_max")) {
			double s = ((softmax_fn)f)(n, y, x, 0.0f);
			fwrite(y, 4, n, stdout);
			fwrite(&s, 8, 1, stdout);
		} else if (strstr(argv[2], "swiglu")) {
			((swiglu_fn)f)(n, y, x, g);
			fwrite(y, 4, n, stdout);
		} else {
			fprintf(stderr, "unknown kernel %s\n", argv[2]);
			return 2;
		}
		fflush(stdout); // the reader waits for each record's result before it writes the next
	}
	return 0;
}
