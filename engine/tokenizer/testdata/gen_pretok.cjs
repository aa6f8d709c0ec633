// Generates pretok.json: pre-tokenizer splits made with the real regular
// expressions (JavaScript's, which have look-ahead and \p{..}), for
// TestPreTokenizers. Run: node gen_pretok.cjs > pretok.json (.cjs: the repo's
// package.json makes .js files ES modules)
// The inputs avoid U+0085 and U+FEFF, where JavaScript's \s differs from
// Unicode White_Space (which llama.cpp and Go use).
const fs = require('fs');
const path = require('path');

const gpt2 = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const llama3 = /(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;
const qwen2 = /(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;
const digit = /\p{N}/gu;

// split applies one expression inside each segment; unmatched text stays a
// segment (llama.cpp's unicode_regex_split).
function split(segs, re) {
  const out = [];
  for (const s of segs) {
    let last = 0;
    for (const m of s.matchAll(re)) {
      if (m.index > last) out.push(s.slice(last, m.index));
      if (m[0].length > 0) out.push(m[0]);
      last = m.index + m[0].length;
    }
    if (last < s.length) out.push(s.slice(last));
  }
  return out;
}

// A deterministic generator (xorshift32).
let seed = 20240611;
function rnd(n) {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed % n;
}
const alphabet = ['a', 'B', 'z', 'Hello', ' ', '  ', '\n', '\r', '\t', '\r\n', "'s", "'T", "'re", "'LL", "'ve", "'", "'x",
  '1', '23', '456', '7890', '!', '?', '.', ',', '-', '...', 'é', 'ß', '中', '文', '🦙', '😀', '٣', 'Ⅻ', '½',
  '\u00a0', '\u3000', '\u2003', 'ǅ', '\u0301', '$', '+', '<', '=', '>', '^', '~', '|', '_', '@', '#', '"', '\v', '\f'];

const inputs = [];
const inp = fs.readFileSync(path.join(__dirname, '../../../../shared/testdata/ggml-vocab-gpt-2.gguf.inp'), 'utf8');
for (const s of inp.split('\n__ggml_vocab_test__\n')) inputs.push(s);
inputs.push("I'm can't WE'LL they'Re 12345678 3.14159 x\n\n\ny  \n z", "   leading and trailing   ", "a\r\n\r\nb", "\t\t\tx");
for (let i = 0; i < 400; i++) {
  let s = '';
  const n = 1 + rnd(12);
  for (let j = 0; j < n; j++) s += alphabet[rnd(alphabet.length)];
  inputs.push(s);
}
const cases = inputs.map(s => ({
  in: s,
  'gpt-2': split([s], gpt2),
  'llama-bpe': split([s], llama3),
  'qwen2': split([s], qwen2),
  'smollm': split(split([s], digit), gpt2),
}));
process.stdout.write(JSON.stringify(cases, null, 0).replace(/\},\{/g, '},\n{') + '\n');
