package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
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
	var calls []openai.ToolCall
	lps := []openai.TokenLogprob{}
	res, err := s.run(r.Context(), sess, j, func(p piece) bool {
		lps = append(lps, p.lps...)
		switch {
		case p.call == nil:
			out.WriteString(p.content)
		case p.call.Name != "":
			calls = append(calls, openai.ToolCall{ID: callID(c.ID, p.call.Index), Type: "function", Function: openai.ToolFunction{Name: p.call.Name}})
		default:
			calls[p.call.Index].Function.Arguments += p.call.Args
		}
		return true
	})
	if err != nil {
		if aerr := budgetError(err); aerr != nil {
			aerr.write(w)
			return
		}
		writeError(w, http.StatusInternalServerError, "server_error", "", "generation_failed", err.Error())
		return
	}
	text := out.String()
	ch := openai.Choice{FinishReason: &res.finish, StopReason: res.stopReason}
	if chat {
		ch.Message = &openai.Message{Role: "assistant", Content: &text, ToolCalls: calls}
		if len(calls) > 0 && strings.TrimSpace(text) == "" {
			ch.Message.Content = nil
		}
		if j.logprobs {
			ch.Logprobs = &openai.Logprobs{Content: lps}
		}
	} else {
		ch.Text = &text
		if j.logprobs {
			ch.Logprobs = &openai.Logprobs{Legacy: (&legacyOffsets{offset: j.promptChars}).add(lps)}
		}
	}
	c.Choices = []openai.Choice{ch}
	c.Usage, c.Timings = usageOf(res.stats), timingsOf(res.stats)
	writeJSON(w, http.StatusOK, c)
}

// callID is the id of call i of completion id.
func callID(completion string, i int) string {
	_, suffix, _ := strings.Cut(completion, "-")
	return fmt.Sprintf("call_%s_%d", suffix, i)
}

// budgetError is the 400 for a request whose constrained output cannot fit
// in its tokens (engine.ErrJSONBudget, engine.ErrGrammarBudget), found
// before any token was generated; nil for other errors.
func budgetError(err error) *apiError {
	if errors.Is(err, engine.ErrJSONBudget) || errors.Is(err, engine.ErrGrammarBudget) {
		return badRequest("max_tokens", "the constrained output cannot be completed: %v", err)
	}
	return nil
}

// piece is what run passes on as the reply is generated: content text, or a
// part of a tool call (its name first, then pieces of its arguments), and
// the log probabilities of the tokens generated since the last piece. A
// piece may carry only log probabilities.
type piece struct {
	content string
	call    *chat.ToolEvent
	lps     []openai.TokenLogprob
}

// result is how a run ended.
type result struct {
	finish     string // finish_reason
	stopReason string // the extension's stop_reason ("" when finish_reason says it all)
	stats      engine.Stats
}

// run generates for j, passing the reply to out as it becomes final. With
// tools the text goes through chat.ToolStream first; content (not calls)
// goes through the stop sequences, which are held back until they can no
// longer match, and cut. out returning false stops generation.
func (s *Server) run(ctx context.Context, sess *engine.Session, j *job, out func(piece) bool) (res result, err error) {
	stop := engine.NewStopper(j.stops)
	hit, aborted := false, false
	calls := 0
	var lp *engine.Logprobs
	if j.logprobs {
		lp = engine.NewLogprobs(j.topLogprobs)
	}
	var pending []openai.TokenLogprob
	send := func(p piece) {
		if aborted {
			return
		}
		p.lps, pending = pending, nil
		if !out(p) {
			aborted = true
		}
	}
	content := func(text string) {
		if hit || aborted {
			return
		}
		emit, h := stop.Push([]byte(text))
		if len(emit) > 0 {
			send(piece{content: string(emit)})
		}
		hit = h
	}
	var ts *chat.ToolStream
	event := func(e chat.ToolEvent) {
		if !e.Call {
			content(e.Content)
			return
		}
		if e.Name != "" {
			calls++
		}
		if !hit && !aborted {
			send(piece{call: &e})
		}
	}
	if j.tools {
		ts = &chat.ToolStream{}
	}
	opts := engine.GenerateOptions{MaxTokens: j.maxTokens, JSON: j.json, Grammar: j.grammar, Sampling: j.params, Logprobs: lp}
	res.stats, err = sess.Generate(j.prompt, opts, func(id int, text []byte) bool {
		if hit || aborted {
			return false
		}
		if ctx.Err() != nil {
			aborted = true
			return false
		}
		if lp != nil && id >= 0 {
			pending = append(pending, s.tokenLogprob(id, lp))
		}
		if ts != nil {
			ts.Push(string(text), event)
		} else {
			content(string(text))
		}
		return !hit && !aborted
	})
	stuck := errors.Is(err, engine.ErrGrammarStuck)
	if err != nil && !stuck {
		return res, err
	}
	cut := false // the reply ends inside a call
	if !hit && !aborted {
		if ts != nil {
			cut = ts.InCall()
			ts.Flush(event)
		}
		if rest := stop.Flush(); len(rest) > 0 {
			send(piece{content: string(rest)})
		}
	}
	if len(pending) > 0 {
		send(piece{})
	}
	res.finish = finishReason(res.stats.Stop, hit)
	if calls > 0 && !cut {
		// Every call is complete (the grammar closes them in time; with
		// parallel calls it may still allow another when max_tokens ends
		// the reply).
		res.finish = "tool_calls"
	}
	if stuck {
		res.stopReason = err.Error()
	}
	return res, nil
}

// tokenLogprob is token id's entry in logprobs.content, from lp as the
// engine filled it for that token.
func (s *Server) tokenLogprob(id int, lp *engine.Logprobs) openai.TokenLogprob {
	tok, b := s.tokenText(id)
	e := openai.TokenLogprob{Token: tok, Logprob: finiteLogprob(lp.Logprob), Bytes: b, TopLogprobs: make([]openai.TopLogprob, len(lp.Top))}
	for i, t := range lp.Top {
		tok, b := s.tokenText(t.ID)
		e.TopLogprobs[i] = openai.TopLogprob{Token: tok, Logprob: finiteLogprob(t.Logprob), Bytes: b}
	}
	return e
}

// finiteLogprob is a log probability JSON can hold: -Inf (a probability
// that underflowed) becomes OpenAI's floor, -9999.
func finiteLogprob(l float32) float64 {
	if math.IsInf(float64(l), 0) || math.IsNaN(float64(l)) || l < -9999 {
		return -9999
	}
	return float64(l)
}

// tokenText is a token's text and bytes for logprobs (engine.Model.TokenText).
func (s *Server) tokenText(id int) (string, []int) { return s.m.TokenText(id) }

// stream answers with server-sent events: one chunk per piece of the reply
// (content text, a tool call's start with its id and name, a piece of its
// arguments), flushed at once, then a chunk with finish_reason (and usage
// when asked), then "data: [DONE]".
func (s *Server) stream(w http.ResponseWriter, ctx context.Context, sess *engine.Session, j *job, c openai.Completion) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	id := c.ID
	if j.chat {
		c.Object = "chat.completion.chunk"
	}
	var buf []byte
	offsets := &legacyOffsets{offset: j.promptChars}
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
	chunk := func(p piece, finish *string) openai.Completion {
		ch := openai.Choice{FinishReason: finish}
		if j.chat {
			d := &openai.Delta{}
			switch {
			case p.call != nil:
				i := p.call.Index
				tc := openai.ToolCall{Index: &i, Function: openai.ToolFunction{Arguments: p.call.Args}}
				if p.call.Name != "" {
					tc.ID, tc.Type, tc.Function.Name = callID(id, i), "function", p.call.Name
				}
				d.ToolCalls = []openai.ToolCall{tc}
			case p.content != "":
				text := p.content
				d.Content = &text
			}
			ch.Delta = d
			if p.lps != nil {
				ch.Logprobs = &openai.Logprobs{Content: p.lps}
			}
		} else {
			text := p.content
			ch.Text = &text
			if j.logprobs && p.lps != nil {
				ch.Logprobs = &openai.Logprobs{Legacy: offsets.add(p.lps)}
			}
		}
		c.Choices = []openai.Choice{ch}
		return c
	}
	if j.chat {
		first := chunk(piece{}, nil)
		empty := ""
		first.Choices[0].Delta.Role, first.Choices[0].Delta.Content = "assistant", &empty
		if !send(first) {
			return
		}
	}
	res, err := s.run(ctx, sess, j, func(p piece) bool { return send(chunk(p, nil)) })
	if err != nil {
		send(openai.NewError("server_error", "", "generation_failed", err.Error()))
		return
	}
	if ctx.Err() != nil {
		return
	}
	last := chunk(piece{}, &res.finish)
	last.Choices[0].StopReason = res.stopReason
	last.Timings = timingsOf(res.stats)
	if !send(last) {
		return
	}
	if j.includeUsage {
		u := c
		u.Choices = []openai.Choice{}
		u.Usage = usageOf(res.stats)
		if !send(u) {
			return
		}
	}
	w.Write([]byte("data: [DONE]\n\n"))
	if flusher != nil {
		flusher.Flush()
	}
}

// legacyOffsets turns chat's log-probability entries into completions'
// legacy shape, across the pieces of one completion: offset is the
// text_offset of the next token (in code points from the start of the
// prompt), pend the bytes of a character not yet whole (a token may end
// inside one; the character counts at the token that completes it).
type legacyOffsets struct {
	offset int
	pend   []byte
}

func (st *legacyOffsets) add(lps []openai.TokenLogprob) *openai.LegacyLogprobs {
	out := &openai.LegacyLogprobs{
		Tokens:        make([]string, 0, len(lps)),
		TokenLogprobs: make([]float64, 0, len(lps)),
		TopLogprobs:   make([]map[string]float64, 0, len(lps)),
		TextOffset:    make([]int, 0, len(lps)),
	}
	for _, e := range lps {
		top := make(map[string]float64, len(e.TopLogprobs))
		for _, t := range e.TopLogprobs {
			if _, dup := top[t.Token]; !dup { // two tokens with one text: the likelier
				top[t.Token] = t.Logprob
			}
		}
		out.Tokens = append(out.Tokens, e.Token)
		out.TokenLogprobs = append(out.TokenLogprobs, e.Logprob)
		out.TopLogprobs = append(out.TopLogprobs, top)
		out.TextOffset = append(out.TextOffset, st.offset)
		for _, b := range e.Bytes {
			st.pend = append(st.pend, byte(b))
		}
		for len(st.pend) > 0 && utf8.FullRune(st.pend) {
			_, n := utf8.DecodeRune(st.pend)
			st.pend = st.pend[n:]
			st.offset++
		}
	}
	return out
}
