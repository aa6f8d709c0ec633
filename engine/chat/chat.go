// Package chat formats a conversation into a prompt with the model's chat
// template: the Jinja template a GGUF file carries in tokenizer.chat_template
// (Hugging Face's tokenizer_config.json "chat_template").
//
// The package runs the subset of Jinja that chat templates use, with the
// whitespace rules Hugging Face renders them with (trim_blocks and
// lstrip_blocks): text, {{ }}, {% if/elif/else %}, {% for %} (with loop.*,
// loop filters, else, break/continue), {% set %} (also namespace
// attributes and block sets), {% macro %}, {% generation %}, comments, the
// Python operators and literals, string/dict methods (strip, startswith,
// split, items, get, ...), the filters and tests chat templates use (trim,
// length, tojson, default, selectattr, ..., defined, none, string, ...),
// and the globals raise_exception, namespace and range. Anything else is an
// error, at Parse time for unknown statements and syntax, at Apply time for
// unknown filters, tests and functions.
//
// The formatted prompt is plain text that still contains the template's
// special tokens ("<|im_start|>", "</s>", ...): tokenize it with special-token
// parsing on, so they become their token ids.
package chat

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors.
var (
	// ErrTemplate: the template does not parse or uses a statement outside
	// the supported subset. The error text says where.
	ErrTemplate = errors.New("chat: bad template")
	// ErrRender: the template failed while formatting (raise_exception, an
	// unknown filter, a type error, a resource limit).
	ErrRender = errors.New("chat: template error")
)

// Message is one turn of a conversation. Role is "system", "user" or
// "assistant".
type Message struct {
	Role, Content string
}

// Template is a compiled chat template. It is immutable and safe for
// concurrent use.
type Template struct {
	src  string
	body []node
}

// Parse compiles a Jinja chat template.
func Parse(src string) (*Template, error) {
	body, err := parseTemplate(src)
	if err != nil {
		return nil, err
	}
	return &Template{src: src, body: body}, nil
}

// Source returns the template text.
func (t *Template) Source() string { return t.src }

// Apply formats msgs. addGenerationPrompt asks the template to end with the
// opening of an assistant turn; bos and eos are the texts of the model's
// BOS and EOS tokens (templates write them as bos_token and eos_token).
func (t *Template) Apply(msgs []Message, addGenerationPrompt bool, bos, eos string) (string, error) {
	list := make([]value, len(msgs))
	for i, m := range msgs {
		d := newDict()
		d.set("role", m.Role)
		d.set("content", m.Content)
		list[i] = d
	}
	globals := map[string]value{
		"messages":              list,
		"add_generation_prompt": addGenerationPrompt,
		"bos_token":             bos,
		"eos_token":             eos,
	}
	// Template variables live one scope below the globals, so a template's
	// top-level {% set messages = ... %} shadows without touching them.
	st := &state{sc: &scope{vars: map[string]value{}, parent: &scope{vars: globals}}}
	var out strings.Builder
	err := st.render(t.body, &out)
	if err == errBreak || err == errContinue {
		err = nil
	}
	if err != nil {
		return "", err
	}
	return out.String(), nil
}

// Builtin families, each with a real model's template text.
var builtins = map[string]string{
	// ChatML as in teknium/OpenHermes-2.5-Mistral-7B (Qwen2 and SmolLM2 use
	// the same turn format).
	"chatml": `{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`,
	// meta-llama/Llama-2-7b-chat-hf.
	"llama2": `{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}`,
	// TinyLlama/TinyLlama-1.1B-Chat-v1.0 (HuggingFaceH4/zephyr-7b-beta).
	"zephyr": "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}",
	// meta-llama/Meta-Llama-3-8B-Instruct.
	"llama3": `{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>

'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>

' }}{% endif %}`,
	// microsoft/Phi-3.5-mini-instruct (and the 2024 Phi-3-mini update).
	"phi3": `{% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'user' %}{{'<|user|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>
' + message['content'] + '<|end|>
'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>
' }}{% else %}{{ eos_token }}{% endif %}`,
	// HuggingFaceTB/SmolLM2-*-Instruct.
	"smollm2": `{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system
You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
' }}{% endif %}{{'<|im_start|>' + message['role'] + '
' + message['content'] + '<|im_end|>' + '
'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant
' }}{% endif %}`,
}

// Builtin returns the template of a model family: "chatml", "llama2",
// "zephyr" (TinyLlama), "llama3", "phi3" or "smollm2".
func Builtin(name string) (*Template, bool) {
	src, ok := builtins[name]
	if !ok {
		return nil, false
	}
	t, err := Parse(src)
	if err != nil {
		panic(fmt.Sprintf("chat: builtin template %q does not parse: %v", name, err))
	}
	return t, true
}

// Detect tells which builtin family a template string belongs to, from the
// markers its turns are written with, or "" if none. Like llama.cpp's
// llm_chat_detect_template, it looks at the text, not at the structure.
func Detect(src string) string {
	has := func(s string) bool { return strings.Contains(src, s) }
	switch {
	case has("<|im_start|>") && has("SmolLM"):
		return "smollm2"
	case has("<|im_start|>"):
		return "chatml"
	case has("<|start_header_id|>") && has("<|end_header_id|>"):
		return "llama3"
	case has("<|end|>") && (has("<|user|>") || has("<|assistant|>")):
		return "phi3"
	case has("<|user|>") && has("<|assistant|>"):
		return "zephyr"
	case has("[INST]"):
		return "llama2"
	}
	return ""
}

// probe is the conversation ForModel checks a template with.
var probe = [...]Message{
	{Role: "system", Content: "s"},
	{Role: "user", Content: "u"},
	{Role: "assistant", Content: "a"},
	{Role: "user", Content: "u"},
}

// ForModel returns the template to use for a model whose GGUF carries
// chatTemplate in tokenizer.chat_template: the template itself if it parses
// and formats a system/user/assistant/user conversation, otherwise the
// builtin family Detect recognises in it. It returns nil when there is no
// usable template (the caller then does plain completion).
func ForModel(chatTemplate string) *Template {
	if strings.TrimSpace(chatTemplate) == "" {
		return nil
	}
	if t, err := Parse(chatTemplate); err == nil {
		if _, err := t.Apply(probe[:], true, "<s>", "</s>"); err == nil {
			return t
		}
		// A template that refuses a system turn (Gemma, Mistral v1) is still
		// the right template for conversations without one.
		if _, err := t.Apply(probe[1:], true, "<s>", "</s>"); err == nil {
			return t
		}
	}
	if name := Detect(chatTemplate); name != "" {
		t, _ := Builtin(name)
		return t
	}
	return nil
}
