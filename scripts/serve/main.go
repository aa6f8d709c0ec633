// Command serve is the development web server for the browser build: it
// serves a directory (the repo root) on localhost with the right MIME types,
// gzip or brotli for compressible files when the browser accepts them, and
// the Cross-Origin-Opener-Policy / Cross-Origin-Embedder-Policy headers that
// make SharedArrayBuffer available.
//
//	go run ./scripts/serve [-addr 127.0.0.1:8080] [-root .] [-mount /models/=DIR]... [-mount-no-range /plain/=DIR]... [-log-requests FILE]
//
// It prints the page's URL once it is listening (-addr with port 0 picks a
// free port).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
)

// compressible are the extensions worth compressing on the fly. Model files
// are not: their bytes barely compress, and the loader needs Content-Length
// to allocate the engine's buffer once.
var compressible = map[string]bool{
	".wasm": true, ".js": true, ".mjs": true, ".html": true, ".css": true,
	".json": true, ".jsonl": true, ".md": true, ".txt": true, ".svg": true,
}

type mounts []string

func (m *mounts) String() string     { return strings.Join(*m, ",") }
func (m *mounts) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (port 0: any free port)")
	root := flag.String("root", ".", "directory to serve")
	var extra, plain mounts
	flag.Var(&extra, "mount", "serve another directory under a URL prefix: /prefix/=DIR (repeatable)")
	flag.Var(&plain, "mount-no-range", "as -mount, but ignoring Range requests (a server without Range support, for tests)")
	logPath := flag.String("log-requests", "", "append one JSON line per request to `FILE`: method, path, range, status, bytes sent, referer (for tests)")
	flag.Parse()

	h, err := handler(*root, extra, plain...)
	if err != nil {
		log.Fatalf("serve: %v", err)
	}
	if *logPath != "" {
		lf, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatalf("serve: %v", err)
		}
		h = logRequests(h, lf)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("serve: %v", err)
	}
	fmt.Printf("picoLM is served at http://%s/\n", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}

func init() {
	mime.AddExtensionType(".wasm", "application/wasm")
	mime.AddExtensionType(".js", "text/javascript; charset=utf-8")
	mime.AddExtensionType(".mjs", "text/javascript; charset=utf-8")
	mime.AddExtensionType(".gguf", "application/octet-stream")
	mime.AddExtensionType(".jsonl", "application/jsonl; charset=utf-8")
	mime.AddExtensionType(".md", "text/markdown; charset=utf-8")
	// The repo's other text files (the system's table calls .mod
	// application/xml-dtd); files with no extension are sniffed.
	for _, ext := range []string{".mod", ".sum", ".go", ".s", ".h", ".sh", ".toml", ".capnp", ".jinja", ".txt"} {
		mime.AddExtensionType(ext, "text/plain; charset=utf-8")
	}
}

// handler serves root at / and each mount ("/prefix/=DIR") under its
// prefix; the plain mounts without Range support.
func handler(root string, extra []string, plain ...string) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("/", newFiles(root))
	for i, m := range append(append([]string(nil), extra...), plain...) {
		prefix, dir, ok := strings.Cut(m, "=")
		if !ok || !strings.HasPrefix(prefix, "/") || !strings.HasSuffix(prefix, "/") {
			return nil, fmt.Errorf("-mount %q: want /prefix/=DIR", m)
		}
		var h http.Handler = http.StripPrefix(strings.TrimSuffix(prefix, "/"), newFiles(dir))
		if i >= len(extra) {
			h = noRange(h)
		}
		mux.Handle(prefix, h)
	}
	return headers(mux), nil
}

// noRange serves h as a server without Range support does: the whole file.
func noRange(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Range")
		r.Header.Del("If-Range")
		h.ServeHTTP(w, r)
	})
}

// logRequests appends a JSON line per request to w once it is answered.
func logRequests(h http.Handler, w io.Writer) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		c := &counter{ResponseWriter: rw, status: http.StatusOK}
		h.ServeHTTP(c, r)
		line, _ := json.Marshal(map[string]any{
			"method": r.Method, "path": r.URL.Path, "range": r.Header.Get("Range"), "status": c.status,
			"bytes": c.n, "referer": r.Header.Get("Referer"),
		})
		mu.Lock()
		defer mu.Unlock()
		w.Write(append(line, '\n'))
	})
}

// counter counts the body bytes of a response and keeps its status.
type counter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *counter) WriteHeader(s int) { c.status = s; c.ResponseWriter.WriteHeader(s) }
func (c *counter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// headers adds the cross-origin isolation and caching headers to every reply.
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
		w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
		w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
		w.Header().Set("Cache-Control", "no-cache") // revalidate: rebuilt wasm is picked up at once
		h.ServeHTTP(w, r)
	})
}

// files serves a directory, compressing what is worth it. Every path is
// resolved inside the directory (os.Root): a symbolic link that leads out of
// it (a link to /etc) is refused, and so is anything but a regular file (a
// FIFO would block the request, a device would never end).
type files struct {
	root  *os.Root
	err   error // why the directory cannot be served, if it cannot
	mu    sync.Mutex
	cache map[string]encoded // path + encoding → compressed bytes for one modification time
}

type encoded struct {
	mod  time.Time
	size int64
	data []byte
}

func newFiles(dir string) *files {
	root, err := os.OpenRoot(dir)
	return &files{root: root, err: err, cache: map[string]encoded{}}
}

func (f *files) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := path.Clean("/" + r.URL.Path)
	if strings.Contains(name, "/.") { // no dot files or dot directories (.git)
		http.NotFound(w, r)
		return
	}
	if f.err != nil {
		http.Error(w, "cannot read "+name, http.StatusForbidden)
		return
	}
	st, err := f.root.Stat("." + name)
	if err == nil && st.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
			return
		}
		name = path.Join(name, "index.html")
		st, err = f.root.Stat("." + name)
	}
	var fh *os.File
	if err == nil {
		fh, st, err = f.open(name, st)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			http.NotFound(w, r)
		} else {
			http.Error(w, "cannot read "+name, http.StatusForbidden)
		}
		return
	}
	defer fh.Close()
	ext := path.Ext(name)
	if ct := mime.TypeByExtension(ext); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.Header().Add("Vary", "Accept-Encoding")
	if enc := pickEncoding(r.Header.Get("Accept-Encoding")); enc != "" && compressible[ext] && st.Size() > 1024 {
		data, err := f.compressed(name, fh, st, enc)
		if err == nil {
			w.Header().Set("Content-Encoding", enc)
			http.ServeContent(w, r, name, st.ModTime(), bytes.NewReader(data))
			return
		}
		log.Printf("serve: %s: %v (sent uncompressed)", name, err)
	}
	http.ServeContent(w, r, name, st.ModTime(), io.NewSectionReader(fh, 0, st.Size()))
}

// errNotRegular refuses what is not a regular file.
var errNotRegular = errors.New("not a regular file")

// open opens name (stat'ed as st) inside the root when it is a regular file,
// and checks that what it opened is still that file.
func (f *files) open(name string, st fs.FileInfo) (*os.File, fs.FileInfo, error) {
	if !st.Mode().IsRegular() {
		return nil, nil, errNotRegular
	}
	fh, err := f.root.Open("." + name)
	if err != nil {
		return nil, nil, err
	}
	now, err := fh.Stat()
	if err == nil && (!now.Mode().IsRegular() || !os.SameFile(st, now)) {
		err = errNotRegular
	}
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	return fh, now, nil
}

// pickEncoding chooses brotli over gzip when the client accepts it.
func pickEncoding(accept string) string {
	var br, gz bool
	for _, part := range strings.Split(accept, ",") {
		tok, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.ReplaceAll(strings.TrimSpace(params), " ", "") == "q=0" {
			continue
		}
		switch strings.TrimSpace(tok) {
		case "br":
			br = true
		case "gzip":
			gz = true
		}
	}
	switch {
	case br:
		return "br"
	case gz:
		return "gzip"
	}
	return ""
}

func (f *files) compressed(name string, fh *os.File, st fs.FileInfo, enc string) ([]byte, error) {
	key := enc + ":" + name
	f.mu.Lock()
	c, ok := f.cache[key]
	f.mu.Unlock()
	if ok && c.mod.Equal(st.ModTime()) && c.size == st.Size() {
		return c.data, nil
	}
	raw := make([]byte, st.Size())
	if _, err := fh.ReadAt(raw, 0); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	switch enc {
	case "br":
		zw := brotli.NewWriterLevel(&buf, 5)
		if _, err := zw.Write(raw); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
	default:
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		if _, err := zw.Write(raw); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	f.cache[key] = encoded{mod: st.ModTime(), size: st.Size(), data: buf.Bytes()}
	f.mu.Unlock()
	return buf.Bytes(), nil
}
