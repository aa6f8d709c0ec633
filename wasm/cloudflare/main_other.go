//go:build !js

package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"
)

// Natively the Worker's handler runs under net/http, configured by the same
// variables as the Worker (from the environment), for development:
//
//	go run ./wasm/cloudflare -addr 127.0.0.1:8787 [-model file.gguf]
func main() {
	addr := flag.String("addr", "127.0.0.1:8787", "listen address")
	model := flag.String("model", "", "GGUF file (default: the embedded stories260K; required with -tags nomodel)")
	flag.Parse()
	t0 := time.Now()
	s, err := readSettings(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	bs, names := [][]byte{embeddedModel()}, []string{"embedded"}
	if *model != "" {
		// A split GGUF's first shard reads them all, as the Worker fetches them.
		bs, names = nil, modelSources(*model)
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				log.Fatal(err)
			}
			bs = append(bs, b)
		}
		s.cfg.ModelSource = *model
	}
	if bs[0] == nil {
		log.Fatal("-model: ", errNoModel)
	}
	srv, err := newServer(bs, names, s.cfg, t0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "serving %s on http://%s\n", srv.Config().ModelID, *addr)
	log.Fatal(http.ListenAndServe(*addr, srv))
}
