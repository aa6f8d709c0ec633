package jinja

import (
	"errors"
	"strings"
	"testing"
)

// Chat templates (ChatML, Llama 3, Zephyr, Llama 2 as their models ship
// them), for the fuzzer's seeds and the concurrency test.
const (
	chatml = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
	llama3 = "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
	zephyr = "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}"
	llama2 = "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}"
)

// chatVars are the variables of a chat template: the messages given as
// role, content pairs, add_generation_prompt = gen, bos_token "<s>" and
// eos_token "</s>".
func chatVars(gen bool, roleContent ...string) map[string]any {
	msgs := []Dict{}
	for i := 0; i+1 < len(roleContent); i += 2 {
		msgs = append(msgs, Dict{{"role", roleContent[i]}, {"content", roleContent[i+1]}})
	}
	return map[string]any{"messages": msgs, "add_generation_prompt": gen, "bos_token": "<s>", "eos_token": "</s>"}
}

// Jinja semantics the chat templates rely on.
func TestJinjaSemantics(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{{ 'a' + 'b' | upper }}", "aB"},      // filters bind tighter than +
		{"{{ not none is defined }}", "False"}, // is binds tighter than not
		{"{{ 1 + 2 * 3 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 7 / 2 }}", "7|3|-4|1|2|3.5"},
		{"{{ 2 ** 10 }}|{{ 1.0 }}|{{ 1e3 if false else 0.5 }}", "1024|1.0|0.5"},
		{"{{ [1, 2, 3][1:] }}|{{ 'hello'[::-1] }}|{{ 'hello'[-3:] }}|{{ [1,2,3][-1] }}", "[2, 3]|olleh|llo|3"},
		{"{{ 'x' if true else 'y' }}{{ 'x' if false else 'y' }}{{ 'x' if false }}", "xy"},
		{"{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}", "1"}, // for scopes
		{"{% set ns = namespace(x=1) %}{% for i in [1] %}{% set ns.x = 2 %}{% endfor %}{{ ns.x }}", "2"},
		{"{% if true %}{% set x = 3 %}{% endif %}{{ x }}", "3"}, // if does not scope
		{"{% for i in range(5) if i % 2 == 0 %}{{ loop.index }}:{{ i }}/{{ loop.length }} {% endfor %}", "1:0/3 2:2/3 3:4/3 "},
		{"{% for i in [] %}x{% else %}empty{% endfor %}", "empty"},
		{"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}", "a=1;b=2;"},
		{"{% for i in range(10) %}{% if i == 3 %}{% break %}{% endif %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}", "02"},
		{"{{ {'a': [1, 'x', none, true]} | tojson }}", `{"a": [1, "x", null, true]}`},
		{"{{ {'a': 1, 'b': [1]} | tojson(indent=2) }}", "{\n  \"a\": 1,\n  \"b\": [\n    1\n  ]\n}"},
		{"{{ 'é\"\\n' | tojson }}", `"é\"\n"`},
		{"{{ none }}|{{ true }}|{{ undefined_var }}|{{ [none, 'a'] }}", "None|True||[None, 'a']"},
		{"{{ '  hi  '.strip() }}|{{ 'a,b'.split(',') }}|{{ 'Hi'.startswith('H') }}|{{ 'hello world'.title() }}", "hi|['a', 'b']|True|Hello World"},
		{"{{ 'b' in 'abc' }}{{ 'x' not in ['x'] }}{{ 'k' in {'k': 1} }}", "TrueFalseTrue"},
		{"{{ [1, 2] | length }}{{ 'héllo' | length }}{{ [3, 1] | first }}{{ [3, 1] | last }}{{ ['a', 'b'] | join('-') }}", "2531a-b"},
		{"{{ x | default('d') }}|{{ '' | default('d', true) }}|{{ 1 is number }}|{{ 'a' is string }}|{{ {} is mapping }}", "d|d|True|True|True"},
		{"{{ [{'r': 'u'}, {'r': 's'}] | selectattr('r', 'equalto', 'u') | list | length }}|{{ [{'r': 'u'}] | map(attribute='r') | join }}", "1|u"},
		{"{% macro greet(name, p='Hi') %}{{ p }} {{ name }}{% endmacro %}{{ greet('a') }}/{{ greet('b', p='Yo') }}", "Hi a/Yo b"},
		{"{% set x %}in{{ 1 }}{% endset %}{{ x }}", "in1"},
		{"{{ 'a' ~ 1 ~ none }}", "a1None"},
		{"{{ '\\u00e9\\x41\\'' }}", "éA'"},
		{"{# comment #}a{{- ' b ' -}} c", "a b c"},
		{"  {% if true %}\n  x\n  {% endif %}\n", "  x\n"}, // lstrip_blocks + trim_blocks
		{"{%+ if true %}x{% endif %}", "x"},
		{"{% raw %}{{ not evaluated }}{% endraw %}", "{{ not evaluated }}"},
		{"{{ messages | length }}{{ messages[0].role }}{{ messages[0]['content'] }}", "1users"},
		{"{{ (1, 2) }}|{{ [1, 2] + [3] }}|{{ 'ab' * 2 }}", "[1, 2]|[1, 2, 3]|abab"},
	}
	for _, c := range cases {
		tm, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		got, err := tm.Render(chatVars(false, "user", "s"))
		if err != nil {
			t.Errorf("Render(%q): %v", c.src, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.src, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{
		"{{ x ", "{% if x %}", "{% if x %}{% endfor %}", "{% for %}", "{% frob %}", "{{ 'abc }}",
		"{{ a b }}", "{% endif %}", "{{ (1 }}", "{% call x() %}{% endcall %}", "{% set %}",
		"{{ x | }}", "{{ x is }}", "{% for x in y recursive %}{% endfor %}", "{{ [1, 2 }}",
		"{{ " + strings.Repeat("(", 1000) + "1" + strings.Repeat(")", 1000) + " }}",
		strings.Repeat("{% if true %}", 500) + strings.Repeat("{% endif %}", 500),
		"{{ " + strings.Repeat("not ", 1000) + "x }}", "{{ " + strings.Repeat("-", 1000) + "1 }}",
		"{% raw %}abc", "{{ 1 @ 2 }}",
	} {
		if _, err := Parse(src); !errors.Is(err, ErrTemplate) {
			t.Errorf("Parse(%.60q) err = %v, want ErrTemplate", src, err)
		}
	}
}

func TestRenderErrorsAndLimits(t *testing.T) {
	for _, src := range []string{
		"{{ 'a' + 1 }}", "{{ x | nosuchfilter }}", "{{ x is nosuchtest }}", "{{ nosuchfn() }}",
		"{{ 1 / 0 }}", "{{ 1 // 0 }}", "{% set x = 1 %}{% set x.y = 2 %}",
		"{{ 'a' * 100000000 }}", "{{ range(100000000) | length }}",
		"{% for a in range(3000) %}{% for b in range(3000) %}{% endfor %}{% endfor %}",
		"{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
		"{% set ns = namespace(s='xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx') %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
		"{% for i in range(1000000) %}{{ 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' }}{% endfor %}",
		"{{ 'abc'.nosuch() }}", "{{ 1 < 'a' }}", "{% for x in 5 %}{% endfor %}",
	} {
		tm, err := Parse(src)
		if err != nil {
			t.Errorf("Parse(%q): %v", src, err)
			continue
		}
		if _, err := tm.Render(chatVars(false)); !errors.Is(err, ErrRender) {
			t.Errorf("Render(%.60q) err = %v, want ErrRender", src, err)
		}
	}
}

// A template shared by goroutines renders the same everywhere.
func TestConcurrentRender(t *testing.T) {
	tm, err := Parse(llama3)
	if err != nil {
		t.Fatal(err)
	}
	vars := chatVars(true, "system", "S", "user", "U", "assistant", "A", "user", "U2")
	want, err := tm.Render(vars)
	if err != nil || !strings.HasSuffix(want, "<|start_header_id|>assistant<|end_header_id|>\n\n") {
		t.Fatalf("%q, %v", want, err)
	}
	done := make(chan string)
	for i := 0; i < 8; i++ {
		go func() {
			s, _ := tm.Render(vars)
			done <- s
		}()
	}
	for i := 0; i < 8; i++ {
		if s := <-done; s != want {
			t.Fatal("concurrent Render differs")
		}
	}
}

// TestRenderValues: the Go values Render takes, as a template sees them.
func TestRenderValues(t *testing.T) {
	tm, err := Parse("{{ d }}|{{ m }}|{{ l }}|{{ n + i }}|{{ f }}|{{ b }}|{{ z }}|{{ ds[0].k }}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tm.Render(map[string]any{
		"d": Dict{{"z", 1}, {"a", "x"}}, "m": map[string]any{"z": 1, "a": []any{true, nil}},
		"l": []any{1, 2.5, "s"}, "n": 2, "i": int64(3), "f": 0.5, "b": false, "z": nil,
		"ds": []Dict{{{"k", "v"}}},
	})
	if want := "{'z': 1, 'a': 'x'}|{'a': [True, None], 'z': 1}|[1, 2.5, 's']|5|0.5|False|None|v"; err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
	if _, err := tm.Render(map[string]any{"d": struct{}{}}); !errors.Is(err, ErrRender) {
		t.Errorf("an unsupported Go type: %v", err)
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{chatml, llama3, zephyr, llama2} {
		f.Add(s)
	}
	f.Add("{% for i in range(3) %}{{ i }}{% endfor %}{{ 'a'[1:] | tojson }}")
	vars := chatVars(true, "system", "S", "user", "U", "assistant", "A", "user", "U2")
	f.Fuzz(func(t *testing.T, src string) {
		tm, err := Parse(src)
		if err != nil {
			if !errors.Is(err, ErrTemplate) {
				t.Fatalf("Parse error without ErrTemplate: %v", err)
			}
			return
		}
		_, err = tm.Render(vars)
		if err != nil && !errors.Is(err, ErrRender) {
			t.Fatalf("Render error without ErrRender: %v", err)
		}
	})
}
