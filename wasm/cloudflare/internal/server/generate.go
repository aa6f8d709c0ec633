package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/openai"
)

func usageOf(st engine.Stats) *openai.Usage {
	u := &openai.Usage{PromptTokens: st.PromptTokens, CompletionTokens: st.Generated, TotalTokens: st.PromptTokens + st.Generated}
	u.PromptTokensDetails.CachedTokens = st.CachedTokens
	return u
}

func timingsOf(st engine.Stats) *openai.Timings {
	return &openai.Timings{
		PromptN: st.PromptTokens - st.CachedTokens, PromptMS: ms(st.Prefill),
		PredictedN: st.Generated, PredictedMS: ms(st.Decode),
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (s *Server) complete(w http.ResponseWriter, r *http.Request, chat bool) {
	j, aerr := s.parse(w, r, chat)
	if aerr != nil {
		aerr.write(w)
		return
	}
	sess, err := s.pool.acquire(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "unavailable", "no session: "+err.Error())
		return
	}
	defer s.pool.release(sess)
	s.active.Add(1)
	defer s.active.Add(-1)

	prefix, object := "cmpl", "text_completion"
	if chat {
		prefix, object = "chatcmpl", "chat.completion"
	}
	c := openai.Completion{
		ID:      fmt.Sprintf("%s-%x%06x", prefix, s.start.UnixNano(), s.seq.Add(1)),
		Object:  object,
		Created: time.Now().Unix(),
		Model:   s.cfg.ModelID,
	}
	if j.stream {
		s.stream(w, r.Context(), sess, j, c)
		return
	}

	var out strings.Builder
	finish, st, err := s.run(r.Context(), sess, j, func(t string) bool { out.WriteString(t); return true })
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "", "generation_failed", err.Error())
		return
	}
	text := out.String()
	ch := openai.Choice{FinishReason: &finish}
	if chat {
		ch.Message = &openai.Message{Role: "assistant", Content: &text}
	} else {
		ch.Text = &text
	}
	c.Choices = []openai.Choice{ch}
	c.Usage, c.Timings = usageOf(st), timingsOf(st)
	writeJSON(w, http.StatusOK, c)
}

// run generates for j, passing text to out as it becomes final (stop
// sequences are held back until they can no longer match, and cut). out
// returning false stops generation.
func (s *Server) run(ctx context.Context, sess *engine.Session, j *job, out func(string) bool) (finish string, st engine.Stats, err error) {
	stop := stopper{stops: j.stops}
	hit, aborted := false, false
	st, err = sess.Generate(j.prompt, engine.GenerateOptions{MaxTokens: j.maxTokens, JSON: j.json, Sampling: j.params},
		func(_ int, text []byte) bool {
			if hit || aborted {
				return false
			}
			if ctx.Err() != nil {
				aborted = true
				return false
			}
			emit, h := stop.push(text)
			if len(emit) > 0 && !out(string(emit)) {
				aborted = true
				return false
			}
			if h {
				hit = true
				return false
			}
			return true
		})
	if err != nil {
		return "", st, err
	}
	if !hit && !aborted {
		if rest := stop.flush(); len(rest) > 0 {
			out(string(rest))
		}
	}
	return finishReason(st.Stop, hit), st, nil
}

// stream answers with server-sent events: one chunk per piece of text,
// flushed at once, then a chunk with finish_reason (and usage when asked),
// then "data: [DONE]".
func (s *Server) stream(w http.ResponseWriter, ctx context.Context, sess *engine.Session, j *job, c openai.Completion) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if j.chat {
		c.Object = "chat.completion.chunk"
	}
	var buf []byte
	send := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		buf = append(append(append(buf[:0], "data: "...), b...), "\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	chunk := func(text *string, finish *string) openai.Completion {
		ch := openai.Choice{FinishReason: finish}
		if j.chat {
			ch.Delta = &openai.Message{Content: text}
		} else {
			if text == nil {
				empty := ""
				text = &empty
			}
			ch.Text = text
		}
		c.Choices = []openai.Choice{ch}
		return c
	}
	if j.chat {
		empty := ""
		first := chunk(&empty, nil)
		first.Choices[0].Delta.Role = "assistant"
		if !send(first) {
			return
		}
	}
	finish, st, err := s.run(ctx, sess, j, func(t string) bool { return send(chunk(&t, nil)) })
	if err != nil {
		send(openai.NewError("server_error", "", "generation_failed", err.Error()))
		return
	}
	if ctx.Err() != nil {
		return
	}
	last := chunk(nil, &finish)
	last.Timings = timingsOf(st)
	if !send(last) {
		return
	}
	if j.includeUsage {
		u := c
		u.Choices = []openai.Choice{}
		u.Usage = usageOf(st)
		if !send(u) {
			return
		}
	}
	w.Write([]byte("data: [DONE]\n\n"))
	if flusher != nil {
		flusher.Flush()
	}
}

// stopper cuts generated text at the first stop sequence. Text that could
// still be the start of a stop sequence is held back until the next token
// decides it.
type stopper struct {
	stops   []string
	pending []byte
}

// push appends text and returns what is final now; hit reports that a stop
// sequence matched (out then ends just before it).
func (s *stopper) push(text []byte) (out []byte, hit bool) {
	if len(s.stops) == 0 {
		return text, false
	}
	s.pending = append(s.pending, text...)
	cut := -1
	for _, st := range s.stops {
		if i := strings.Index(string(s.pending), st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		out = s.pending[:cut]
		s.pending = nil
		return out, true
	}
	hold := 0
	for _, st := range s.stops {
		for k := min(len(st)-1, len(s.pending)); k > hold; k-- {
			if strings.HasSuffix(string(s.pending), st[:k]) {
				hold = k
				break
			}
		}
	}
	n := len(s.pending) - hold
	out = append([]byte(nil), s.pending[:n]...)
	s.pending = append(s.pending[:0], s.pending[n:]...)
	return out, false
}

// flush returns the held-back text at the end of generation.
func (s *stopper) flush() []byte {
	out := s.pending
	s.pending = nil
	return out
}
