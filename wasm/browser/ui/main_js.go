//go:build js

// Command ui is the page (index.html): it wires the DOM, through
// honnef.co/go/js/dom/v2, to the JS API in web/picolm.js (which runs the
// engine in a Web Worker). The page's logic and texts are in package app.
package main

import (
	"errors"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"honnef.co/go/js/dom/v2"

	"github.com/picolm/picolm-wasm/wasm/browser/ui/app"
)

// flushEvery bounds how often streamed text is written to the DOM.
const flushEvery = 30 * time.Millisecond

type ui struct {
	doc    dom.Document
	api    js.Value // PicoLM (the class)
	model  js.Value // a PicoLM instance, or undefined
	info   js.Value
	busy   bool
	runs   int      // generations finished (body[data-runs], for tests and tools)
	abort  js.Value // AbortController of the running generation
	conv   app.Conversation
	output *dom.HTMLDivElement
}

func main() {
	u := &ui{doc: dom.GetWindow().Document(), api: js.Global().Get("PicoLM"), model: js.Undefined()}
	u.output = u.el("output").(*dom.HTMLDivElement)
	u.wire()
	go u.loadBuiltin("")
	select {}
}

func (u *ui) el(id string) dom.Element { return u.doc.GetElementByID(id) }

func (u *ui) input(id string) *dom.HTMLInputElement { return u.el(id).(*dom.HTMLInputElement) }

func (u *ui) button(id string) *dom.HTMLButtonElement { return u.el(id).(*dom.HTMLButtonElement) }

func (u *ui) setText(id, s string) { u.el(id).SetTextContent(s) }

func (u *ui) setState(s string) {
	u.doc.(dom.HTMLDocument).Body().SetAttribute("data-state", s)
	loading := s == "loading" || s == "starting"
	generating := s == "generating"
	u.button("generate").SetDisabled(loading || generating || u.model.IsUndefined())
	u.button("stop").SetDisabled(!generating)
	for _, id := range []string{"load-builtin", "load-url"} {
		u.button(id).SetDisabled(loading || generating)
	}
	u.input("model-file").SetDisabled(loading || generating)
}

func (u *ui) showError(msg string) {
	e := u.el("error")
	e.SetTextContent(msg)
	if msg == "" {
		e.Class().Remove("shown")
	} else {
		e.Class().Add("shown")
	}
}

// wire attaches the event handlers. Handlers that wait on promises run in
// their own goroutine: a js callback must not block.
func (u *ui) wire() {
	u.el("load-builtin").AddEventListener("click", false, func(dom.Event) { go u.loadBuiltin("") })
	u.el("load-url").AddEventListener("click", false, func(dom.Event) { go u.loadURL() })
	u.el("model-url").AddEventListener("keydown", false, func(ev dom.Event) {
		if ev.(*dom.KeyboardEvent).Key() == "Enter" {
			go u.loadURL()
		}
	})
	u.el("model-file").AddEventListener("change", false, func(dom.Event) {
		go u.loadFiles(u.input("model-file").Underlying().Get("files"))
	})
	dz := u.el("dropzone")
	for _, t := range []string{"dragenter", "dragover"} {
		dz.AddEventListener(t, false, func(ev dom.Event) { ev.PreventDefault(); dz.Class().Add("over") })
	}
	dz.AddEventListener("dragleave", false, func(dom.Event) { dz.Class().Remove("over") })
	dz.AddEventListener("drop", false, func(ev dom.Event) {
		ev.PreventDefault()
		dz.Class().Remove("over")
		if !u.busy {
			go u.loadFiles(ev.Underlying().Get("dataTransfer").Get("files"))
		}
	})
	u.el("generate").AddEventListener("click", false, func(dom.Event) { go u.generate() })
	u.el("stop").AddEventListener("click", false, func(dom.Event) { u.stop() })
	u.el("clear").AddEventListener("click", false, func(dom.Event) { u.clear() })
	for _, id := range []string{"mode-complete", "mode-chat"} {
		u.el(id).AddEventListener("change", false, func(dom.Event) { u.clear() })
	}
	dom.GetWindow().AddEventListener("keydown", false, func(ev dom.Event) {
		k := ev.(*dom.KeyboardEvent)
		switch app.Shortcut(k.Key(), k.CtrlKey(), k.MetaKey(), k.AltKey(), k.ShiftKey()) {
		case app.Generate:
			ev.PreventDefault()
			if !u.busy && !u.model.IsUndefined() {
				go u.generate()
			}
		case app.Stop:
			u.stop()
		}
	})
}

// await waits for a promise. It must not be called from a js callback.
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	ok := js.FuncOf(func(_ js.Value, a []js.Value) any {
		ch <- result{v: arg(a)}
		return nil
	})
	fail := js.FuncOf(func(_ js.Value, a []js.Value) any {
		e := arg(a)
		msg := e.String()
		if e.Type() == js.TypeObject && e.Get("message").Type() == js.TypeString {
			msg = e.Get("message").String()
		}
		ch <- result{err: errors.New(msg)}
		return nil
	})
	defer ok.Release()
	defer fail.Release()
	p.Call("then", ok, fail)
	r := <-ch
	return r.v, r.err
}

func arg(a []js.Value) js.Value {
	if len(a) == 0 {
		return js.Undefined()
	}
	return a[0]
}

func (u *ui) loadBuiltin(_ string) { u.load(js.ValueOf("builtin"), "the built-in stories260K") }

// loadFiles loads the files picked or dropped: one model file, or all the
// shards of a split GGUF (NAME-00001-of-00003.gguf, ...) together.
func (u *ui) loadFiles(files js.Value) {
	switch n := files.Length(); n {
	case 0:
	case 1:
		f := files.Index(0)
		u.load(f, f.Get("name").String())
	default:
		u.load(js.Global().Get("Array").Call("from", files), "the "+strconv.Itoa(n)+" files ("+files.Index(0).Get("name").String()+", ...)")
	}
}

func (u *ui) loadURL() {
	url := strings.TrimSpace(u.input("model-url").Value())
	if url == "" {
		u.showError("Type the URL of a .gguf file first.")
		return
	}
	u.load(js.ValueOf(url), url)
}

// load replaces the model by source (a URL string, a File, or "builtin").
// After a failure the built-in model is loaded again, so the page stays usable.
func (u *ui) load(source js.Value, label string) {
	if u.busy {
		return
	}
	u.busy = true
	defer func() { u.busy = false }()
	u.showError("")
	u.setState("loading")
	u.setText("model-status", "Loading "+label+"…")
	box := u.el("progress-box")
	bar := u.el("progress").(*dom.HTMLProgressElement)
	bar.SetValue(0)
	onProgress := js.FuncOf(func(_ js.Value, a []js.Value) any {
		p := a[0]
		box.RemoveAttribute("hidden")
		bar.SetValue(p.Get("fraction").Float())
		how := "" // a download's fields (ranged, connections, resumed); reading the stored file has none
		if r := p.Get("ranged"); r.Type() == js.TypeBoolean {
			how = app.Download(true, r.Bool(), p.Get("connections").Int(), p.Get("resumed").Float())
		}
		u.setText("progress-text", app.Progress(p.Get("loaded").Float(), p.Get("total").Float(), p.Get("bytesPerSec").Float(), p.Get("fromCache").Truthy(), how))
		return nil
	})
	defer onProgress.Release()
	opts := js.ValueOf(map[string]any{})
	opts.Set("onProgress", onProgress)

	var err error
	if u.model.IsUndefined() {
		var m js.Value
		if m, err = await(u.api.Call("load", source, opts)); err == nil {
			u.model = m
		}
	} else {
		_, err = await(u.model.Call("load", source, opts))
	}
	u.refreshCache()
	if err != nil {
		u.showError("Could not load " + label + ": " + err.Error())
		if source.Type() == js.TypeString && source.String() == "builtin" {
			u.setText("model-status", "No model loaded.")
			u.setState("error")
			return
		}
		// Keep the page usable: go back to the built-in model.
		u.setText("model-status", "Loading the built-in stories260K…")
		if u.model.IsUndefined() {
			if m, err := await(u.api.Call("load", "builtin")); err == nil {
				u.model = m
			}
		} else if _, err := await(u.model.Call("load", "builtin")); err != nil {
			u.model = js.Undefined()
		}
	}
	u.showModel()
	u.clear()
	u.setState("idle")
}

func (u *ui) showModel() {
	if u.model.IsUndefined() || u.model.Get("info").IsNull() {
		u.setText("model-status", "No model loaded.")
		return
	}
	i := u.model.Get("info")
	u.info = i
	u.setText("model-status", app.ModelLine(i.Get("name").String(), i.Get("params").Float(), i.Get("bytes").Float(),
		i.Get("fileType").String(), i.Get("context").Int(), i.Get("chatTemplate").String()))
	if t := i.Get("chatTemplate").String(); t != "" {
		u.setText("chat-note", "chat template: "+t)
	} else {
		u.setText("chat-note", "no chat template: chat turns are sent as a plain User:/Assistant: transcript")
	}
	u.showMemory(u.model.Get("memory"))
}

func (u *ui) showMemory(m js.Value) {
	if m.Type() != js.TypeObject {
		return
	}
	page := 0.0
	if pm := js.Global().Get("performance").Get("memory"); pm.Type() == js.TypeObject {
		page = pm.Get("usedJSHeapSize").Float()
	}
	u.setText("memory", app.Memory(m.Get("wasmBytes").Float(), m.Get("jsHeapBytes").Float(), page))
}

func (u *ui) refreshCache() {
	if st, err := await(u.api.Call("storage")); err == nil {
		u.setText("storage", app.Storage(st.Get("usage").Float(), st.Get("quota").Float(), st.Get("persisted").Truthy()))
	}
	list, err := await(u.api.Call("cached"))
	ul := u.el("cache-list")
	ul.SetInnerHTML("")
	if err != nil {
		return
	}
	n := list.Length()
	u.el("cache-empty").Underlying().Set("hidden", n > 0)
	for i := range n {
		e := list.Index(i)
		url := e.Get("url").String()
		li := u.doc.CreateElement("li")
		name := u.doc.CreateElement("span")
		if e.Get("partial").Truthy() {
			// An unfinished download: loading its URL resumes it.
			name.SetTextContent(url + " · partial: " + app.Bytes(e.Get("bytes").Float()) + " of " + app.Bytes(e.Get("total").Float()))
		} else {
			name.SetTextContent(url + " · " + app.Bytes(e.Get("bytes").Float()))
		}
		name.SetAttribute("title", url)
		load := u.doc.CreateElement("button")
		load.SetTextContent("Load")
		load.SetAttribute("data-url", url)
		load.Class().Add("cache-load")
		load.AddEventListener("click", false, func(dom.Event) { go u.load(js.ValueOf(url), url) })
		del := u.doc.CreateElement("button")
		del.SetTextContent("Delete")
		del.SetAttribute("data-url", url)
		del.Class().Add("danger")
		del.Class().Add("cache-delete")
		del.AddEventListener("click", false, func(dom.Event) {
			go func() {
				if _, err := await(u.api.Call("deleteCached", url)); err != nil {
					u.showError("Could not delete " + url + ": " + err.Error())
				}
				u.refreshCache()
			}()
		})
		li.AppendChild(name)
		li.AppendChild(load)
		li.AppendChild(del)
		ul.AppendChild(li)
	}
}

func (u *ui) chatMode() bool { return u.input("mode-chat").Checked() }

func (u *ui) clear() {
	if u.busy {
		return
	}
	u.conv.Reset()
	u.output.SetInnerHTML("")
	u.setText("stats", "")
}

func (u *ui) number(id string, def float64) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(u.input(id).Value()), 64)
	if err != nil {
		return def
	}
	return v
}

// span appends a span of class cls to parent and returns it.
func (u *ui) span(parent dom.Element, cls, text string) dom.Element {
	s := u.doc.CreateElement("span")
	s.Class().Add(cls)
	s.SetTextContent(text)
	parent.AppendChild(s)
	return s
}

func (u *ui) turn(role, text string) dom.Element {
	d := u.doc.CreateElement("div")
	d.Class().Add("turn")
	d.Class().Add(role)
	u.span(d, "who", role)
	body := u.span(d, "text", text)
	u.output.AppendChild(d)
	return body
}

func (u *ui) generate() {
	if u.busy || u.model.IsUndefined() {
		return
	}
	prompt := u.el("prompt").(*dom.HTMLTextAreaElement).Value()
	chat := u.chatMode()
	if strings.TrimSpace(prompt) == "" && chat {
		u.showError("Type a message first.")
		return
	}
	u.busy = true
	defer func() { u.busy = false }()
	u.showError("")
	u.setState("generating")

	var input js.Value
	var target dom.Element
	if chat {
		msgs := u.conv.Ask(prompt)
		arr := js.Global().Get("Array").New()
		for _, m := range msgs {
			arr.Call("push", map[string]any{"role": m.Role, "content": m.Content})
		}
		input = arr
		u.turn("user", prompt)
		target = u.turn("assistant", "")
		u.el("prompt").(*dom.HTMLTextAreaElement).SetValue("")
	} else {
		input = js.ValueOf(prompt)
		u.output.SetInnerHTML("")
		u.span(u.output, "prompt", prompt)
		target = u.span(u.output, "gen", "")
	}

	var pending strings.Builder
	var shown strings.Builder
	last := time.Now()
	flush := func() {
		if pending.Len() == 0 {
			return
		}
		shown.WriteString(pending.String())
		if chat {
			u.conv.Append(pending.String())
		}
		pending.Reset()
		target.SetTextContent(shown.String())
		u.output.Underlying().Set("scrollTop", u.output.Underlying().Get("scrollHeight"))
	}
	onToken := js.FuncOf(func(_ js.Value, a []js.Value) any {
		t := a[0]
		pending.WriteString(t.Get("text").String())
		if time.Since(last) >= flushEvery {
			flush()
			u.setText("stats", app.Live(t.Get("count").Int(), t.Get("tokensPerSec").Float()))
			last = time.Now()
		}
		return nil
	})
	defer onToken.Release()
	u.abort = js.Global().Get("AbortController").New()
	opts := js.ValueOf(map[string]any{
		"maxTokens":   int(u.number("max-tokens", 200)),
		"temperature": u.number("temperature", 0.8),
		"topP":        u.number("top-p", 0.9),
		"topK":        int(u.number("top-k", 0)),
		"seed":        u.number("seed", 42),
		"json":        u.input("json").Checked(),
	})
	opts.Set("onToken", onToken)
	opts.Set("signal", u.abort.Get("signal"))
	st, err := await(u.model.Call("run", input, opts))
	u.abort = js.Undefined()
	flush()
	if chat {
		u.conv.Finish(err == nil)
	}
	if err != nil {
		u.showError("Generation failed: " + err.Error())
		u.setText("stats", "")
	} else {
		u.setText("stats", app.StatsLine(app.Stats{
			PromptTokens: st.Get("promptTokens").Int(), CachedTokens: st.Get("cachedTokens").Int(),
			Generated: st.Get("generated").Int(), PrefillMs: st.Get("prefillMs").Float(),
			DecodeMs: st.Get("decodeMs").Float(), TokensPerSec: st.Get("tokensPerSec").Float(),
			Stop: st.Get("stop").String(),
		}))
		u.showMemory(st.Get("memory"))
	}
	u.runs++
	u.doc.(dom.HTMLDocument).Body().SetAttribute("data-runs", strconv.Itoa(u.runs))
	u.setState("idle")
	u.el("prompt").(*dom.HTMLTextAreaElement).Focus()
}

func (u *ui) stop() {
	if u.abort.Type() == js.TypeObject {
		u.abort.Call("abort")
	}
}
