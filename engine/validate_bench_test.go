package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/picolm/picolm-wasm/gguf"
)

// BenchmarkCheckWeights measures the load-time weight check on the
// TinyLlama-shaped files of scripts/bench (~/.cache/picolm-bench), when
// present. Each iteration maps the file afresh and reports Load without the
// check (load-ms), the check on that fresh mapping (check-ms: it is the
// first to touch most pages, a cost the first forward pass pays otherwise)
// and the check again (check-warm-ms: the scan alone).
func BenchmarkCheckWeights(b *testing.B) {
	home, _ := os.UserHomeDir()
	for _, name := range []string{"tinyllama-q4_k_m.gguf", "tinyllama-q4_0.gguf", "tinyllama-q8_0.gguf"} {
		path := filepath.Join(home, ".cache", "picolm-bench", name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		b.Run(name, func(b *testing.B) {
			var load, check, warm time.Duration
			for b.Loop() {
				f, err := gguf.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				m, err := LoadWith(f, LoadOptions{SkipWeightCheck: true})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := m.checkWeights(LoadOptions{}); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if err := m.checkWeights(LoadOptions{}); err != nil {
					b.Fatal(err)
				}
				load, check, warm = load+t1.Sub(t0), check+t2.Sub(t1), warm+time.Since(t2)
				f.Close()
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(ms(load), "load-ms")
			b.ReportMetric(ms(check), "check-ms")
			b.ReportMetric(ms(warm), "check-warm-ms")
		})
	}
}
