package chat

import (
	"encoding/json"
	"strings"
)

// ToolEvent is a piece of a reply read by ToolStream: text content, or a
// part of call Index (the first part of each call has its Name, the later
// ones pieces of its arguments' JSON text, which concatenate to the whole).
type ToolEvent struct {
	Content string // content text (not part of any call)
	Call    bool   // a part of a call
	Index   int    // the call's number in the reply, from 0
	Name    string // the call's function, in its first event (never empty there; "" in the others)
	Args    string // a piece of the arguments
}

// ToolStream splits a reply in the Hermes format (tools.go) into content and
// calls as its text arrives, so each call's name is known before its
// arguments are complete. A reply is calls or content, as ToolGrammar's
// grammar makes it: calls when it starts with "<tool_call>" followed by
// {"name": "...", "arguments": , one call after another (separated by line
// breaks); otherwise all of it is content. Text that could still become the
// start of a call is held until it is decided.
type ToolStream struct {
	state   int
	buf     strings.Builder // held text: an undecided start, a call's head, its tail
	calls   int             // calls begun
	depth   int             // the arguments' nesting ({ and [)
	inStr   bool            // inside a string of the arguments
	escaped bool            // after a backslash in that string
	started bool            // the arguments' first non-space character was seen
}

const (
	tsStart = iota // undecided: buf holds the text so far (spaces, part of the marker)
	tsText         // content, to the end
	tsHead         // after a marker, before the arguments: buf holds it
	tsArgs         // inside the arguments
	tsTail         // after the arguments, up to the closing marker (buf holds it)
)

// Calls is the number of calls begun so far.
func (p *ToolStream) Calls() int { return p.calls }

// InCall reports whether the text so far ends inside a call: its head, its
// arguments or before its closing marker.
func (p *ToolStream) InCall() bool {
	return p.state == tsHead || p.state == tsArgs || p.state == tsTail
}

// Push reads text and passes what it decides to ev, in order.
func (p *ToolStream) Push(text string, ev func(ToolEvent)) {
	for text != "" {
		switch p.state {
		case tsStart:
			p.buf.WriteString(text)
			text = ""
			s := p.buf.String()
			t := s
			if p.calls > 0 {
				t = strings.TrimLeft(s, "\n") // the line break between calls
			}
			switch {
			case strings.HasPrefix(t, ToolCallOpen):
				p.buf.Reset()
				p.state = tsHead
				text = t
			case strings.HasPrefix(ToolCallOpen, t):
				// undecided: hold
			default:
				p.buf.Reset()
				p.state = tsText
				text = s
			}
		case tsText:
			ev(ToolEvent{Content: text})
			text = ""
		case tsHead:
			p.buf.WriteString(text)
			text = ""
			head := p.buf.String()
			name, n, ok := parseHead(head[len(ToolCallOpen):])
			switch {
			case ok:
				idx := p.calls
				p.calls++
				ev(ToolEvent{Call: true, Index: idx, Name: name})
				p.buf.Reset()
				p.state, p.depth, p.inStr, p.escaped, p.started = tsArgs, 0, false, false, false
				text = head[len(ToolCallOpen)+n:]
			case n < 0: // not the format: content from here on
				p.buf.Reset()
				p.state = tsText
				text = head
			}
		case tsArgs:
			from, end := 0, -1 // this text's part of the arguments
		scan:
			for i := 0; i < len(text); i++ {
				c := text[i]
				switch {
				case p.inStr:
					switch {
					case p.escaped:
						p.escaped = false
					case c == '\\':
						p.escaped = true
					case c == '"':
						p.inStr = false
					}
				case c == '"':
					p.inStr = true
				case c == '{' || c == '[':
					p.depth++
				case c == '}' || c == ']':
					p.depth--
				case !p.started && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
					from = i + 1 // before the value
					continue
				}
				p.started = true
				if p.depth <= 0 && !p.inStr {
					end = i + 1
					break scan
				}
			}
			stop := len(text)
			if end >= 0 {
				stop = end
			}
			if from < stop {
				ev(ToolEvent{Call: true, Index: p.calls - 1, Args: text[from:stop]})
			}
			if end < 0 {
				text = ""
				continue
			}
			p.state = tsTail
			text = text[end:]
		case tsTail:
			p.buf.WriteString(text)
			text = ""
			s := p.buf.String()
			if i := strings.Index(s, ToolCallClose); i >= 0 {
				p.buf.Reset()
				p.state = tsStart // another call may follow
				text = s[i+len(ToolCallClose):]
			}
		}
	}
}

// Flush ends the reply: held text that never became a call is content (a
// call cut short stays a call with the arguments sent so far).
func (p *ToolStream) Flush(ev func(ToolEvent)) {
	s := p.buf.String()
	p.buf.Reset()
	switch p.state {
	case tsStart, tsHead:
		if strings.TrimSpace(s) != "" || p.calls == 0 && s != "" {
			ev(ToolEvent{Content: s})
		}
	}
	p.state = tsText
}

// parseHead reads `\s*{\s*"name"\s*:\s*"NAME"\s*,\s*"arguments"\s*:` at the
// start of s. ok: it is there, n bytes long. Otherwise n is 0 while s could
// still become it, -1 when it cannot.
func parseHead(s string) (name string, n int, ok bool) {
	i := 0
	ws := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
	}
	lit := func(l string) int { // 1 matched, 0 need more, -1 mismatch
		for j := 0; j < len(l); j++ {
			if i+j >= len(s) {
				return 0
			}
			if s[i+j] != l[j] {
				return -1
			}
		}
		i += len(l)
		return 1
	}
	str := func() int { // a JSON string: 1, 0 or -1
		if i >= len(s) {
			return 0
		}
		if s[i] != '"' {
			return -1
		}
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '"':
				if err := json.Unmarshal([]byte(s[i:j+1]), &name); err != nil || name == "" {
					return -1 // a call names a function
				}
				i = j + 1
				return 1
			}
		}
		return 0
	}
	for _, step := range []func() int{
		func() int { ws(); return lit("{") },
		func() int { ws(); return lit(`"name"`) },
		func() int { ws(); return lit(":") },
		func() int { ws(); return str() },
		func() int { ws(); return lit(",") },
		func() int { ws(); return lit(`"arguments"`) },
		func() int { ws(); return lit(":") },
	} {
		if r := step(); r <= 0 {
			return "", r, false
		}
	}
	return name, i, true
}

// ParseToolCalls reads a whole reply: its content (the text outside calls,
// trimmed) and its calls (ids left empty).
func ParseToolCalls(text string) (content string, calls []ToolCall) {
	var p ToolStream
	var b strings.Builder
	ev := func(e ToolEvent) {
		switch {
		case !e.Call:
			b.WriteString(e.Content)
		case e.Name != "":
			calls = append(calls, ToolCall{Name: e.Name})
		default:
			calls[e.Index].Arguments += e.Args
		}
	}
	p.Push(text, ev)
	p.Flush(ev)
	return strings.TrimSpace(b.String()), calls
}
