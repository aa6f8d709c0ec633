//go:build nomodel

package main

// embeddedModel is nil under -tags nomodel (build.sh --free): the bundle
// leaves out the embedded stories260K (about 1.1 MB that gzip barely shrinks)
// to fit Cloudflare's free plan, and the model comes from MODEL_URL or an R2
// binding on the first request of each isolate.
func embeddedModel() []byte { return nil }
