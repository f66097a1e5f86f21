// TextTokenizer against Python transformers 5.12.1 / tokenizers 0.23.1: the ids, padded batches
// and vocab sizes recorded by scripts/python_lerobot/smolvla_tiny_vlm.py (SmolVLM's pipeline) and
// scripts/python_lerobot/text_tokenizer_cases.py (four tiny tokenizers covering the other
// supported normalizers, pre-tokenizers, post-processors, added-token flags and GPT2Tokenizer),
// plus the refusals: unsupported types, missing files, unknown tokens, bad text.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <functional>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/policies/vlm/text_tokenizer.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

const std::string kData = std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/";
const char* kVariants[] = {"bytelevel_template", "split_roberta", "llama_bytefallback", "gpt2_class"};

Json load(const std::string& path) { return Json::parse(read_file(path)); }

std::vector<std::vector<int64_t>> rows_of(const torch::Tensor& t) {
  std::vector<std::vector<int64_t>> out;
  auto l = t.to(torch::kLong).contiguous();
  for (int64_t b = 0; b < l.size(0); ++b) {
    auto row = l[b];
    out.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
  }
  return out;
}

// A copy of the tiny SmolVLM tokenizer folder with `edit` applied to tokenizer.json / the config.
std::string edited_folder(const std::string& tag, const std::function<void(Json&, Json&)>& edit) {
  const std::string dir = testing::make_temp_dir("tokenizer_" + tag);
  Json tj = load(kData + "smolvla_tiny_vlm/tokenizer.json");
  Json cfg = load(kData + "smolvla_tiny_vlm/tokenizer_config.json");
  edit(tj, cfg);
  std::ofstream(dir + "/tokenizer.json") << tj.dump();
  std::ofstream(dir + "/tokenizer_config.json") << cfg.dump();
  return dir;
}

// Runs `fn`, expecting a lerobot::Error whose message holds every one of `needles`.
template <typename Fn>
void expect_error(Fn fn, const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST(TextTokenizer, TinyVlmIdsMatchPython) {
  const Json ref = load(kData + "smolvla_tiny_vlm/tokenizer_cases.json");
  const auto tok = TextTokenizer::from_folder(kData + "smolvla_tiny_vlm");
  EXPECT_EQ(tok.vocab_size(), ref["vocab_size"].get<int64_t>());
  EXPECT_EQ(tok.pad_token_id(), ref["pad_token_id"].get<int64_t>());
  EXPECT_EQ(tok.token_id(tok.special_token("fake_image_token")), ref["fake_image_token_id"].get<int64_t>());
  EXPECT_EQ(tok.token_id(tok.special_token("global_image_token")),
            ref["global_image_token_id"].get<int64_t>());
  EXPECT_EQ(tok.special_token("image_token"), "<image>");
  EXPECT_EQ(tok.special_token("end_of_utterance_token"), "<end_of_utterance>");
  ASSERT_EQ(ref["cases"].size(), 12u);
  for (const Json& c : ref["cases"])
    EXPECT_EQ(tok.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<int64_t>>()) << c["text"];
}

// Texts are remembered after their first encoding (the training loop tokenizes the same tasks
// every step): later calls, single or batched, give Python's ids too, as do texts past the
// bound of what is remembered.
TEST(TextTokenizer, RememberedTextsGiveTheSameIds) {
  const Json ref = load(kData + "smolvla_tiny_vlm/tokenizer_cases.json");
  const auto tok = TextTokenizer::from_folder(kData + "smolvla_tiny_vlm");
  for (int pass = 0; pass < 2; ++pass)
    for (const Json& c : ref["cases"])
      EXPECT_EQ(tok.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<int64_t>>()) << pass << c["text"];
  const auto full = TextTokenizer::from_folder(kData + "smolvla_tiny_vlm");
  for (int i = 0; i < 5000; ++i) full.encode("task number " + std::to_string(i));  // fills what it remembers
  for (const Json& c : ref["cases"])
    EXPECT_EQ(full.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<int64_t>>()) << "past the bound";
  const auto again = tok.encode_batch({ref["cases"][0]["text"].get<std::string>()}, 64, true, true);
  const auto ids = ref["cases"][0]["ids"].get<std::vector<int64_t>>();
  ASSERT_EQ(again.input_ids.size(1), static_cast<int64_t>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(again.input_ids[0][i].item<int64_t>(), ids[i]);
}

TEST(TextTokenizer, TinyVlmPaddedBatchesMatchPython) {
  const Json ref = load(kData + "smolvla_tiny_vlm/tokenizer_cases.json");
  const auto tok = TextTokenizer::from_folder(kData + "smolvla_tiny_vlm");
  const auto batch = ref["batch"].get<std::vector<std::string>>();
  const int64_t max_length = ref["max_length"].get<int64_t>();
  int checked = 0;
  for (const char* padding : {"longest", "max_length"})
    for (const char* side : {"right", "left"}) {
      const Json& want = ref["padded"][std::string(padding) + "/" + side];
      const auto enc = tok.encode_batch(batch, max_length, std::string(padding) == "longest",
                                        std::string(side) == "right");
      EXPECT_EQ(enc.input_ids.scalar_type(), torch::kLong);
      EXPECT_EQ(enc.attention_mask.scalar_type(), torch::kBool);
      EXPECT_EQ(rows_of(enc.input_ids), want["input_ids"].get<std::vector<std::vector<int64_t>>>())
          << padding << side;
      EXPECT_EQ(rows_of(enc.attention_mask), want["attention_mask"].get<std::vector<std::vector<int64_t>>>());
      ++checked;
    }
  EXPECT_EQ(checked, 4);
}

TEST(TextTokenizer, ReferenceTokenizersMatchPython) {
  const Json ref = load(kData + "text_tokenizer/cases.json");
  for (const char* name : kVariants) {
    SCOPED_TRACE(name);
    const Json& r = ref.at(name);
    const auto tok = TextTokenizer::from_folder(kData + "text_tokenizer/" + name);
    EXPECT_EQ(tok.vocab_size(), r["vocab_size"].get<int64_t>());
    EXPECT_EQ(tok.pad_token_id(), r["pad_token_id"].get<int64_t>());
    for (const auto& kv : r["token_ids"].items())
      EXPECT_EQ(tok.token_id(kv.key()), kv.value().get<int64_t>()) << kv.key();
    for (const Json& c : r["cases"])
      EXPECT_EQ(tok.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<int64_t>>()) << c["text"];
  }
}

TEST(TextTokenizer, ReferencePaddedBatchesMatchPython) {
  const Json ref = load(kData + "text_tokenizer/cases.json");
  for (const char* name : kVariants) {
    const Json& r = ref.at(name);
    const auto tok = TextTokenizer::from_folder(kData + "text_tokenizer/" + name);
    const auto batch = r["batch"].get<std::vector<std::string>>();
    ASSERT_EQ(r["padded"].size(), 8u);
    for (const Json& p : r["padded"]) {
      SCOPED_TRACE(std::string(name) + " " + p.dump().substr(0, 80));
      const auto enc = tok.encode_batch(batch, p["max_length"].get<int64_t>(), p["padding"] == "longest",
                                        p["side"] == "right", p["truncation"].get<bool>());
      EXPECT_EQ(rows_of(enc.input_ids), p["input_ids"].get<std::vector<std::vector<int64_t>>>());
      EXPECT_EQ(rows_of(enc.attention_mask), p["attention_mask"].get<std::vector<std::vector<int64_t>>>());
    }
  }
}

TEST(TextTokenizer, UnsupportedPreTokenizerIsRefusedNamingTypeAndFile) {
  const std::string dir = edited_folder("whitespace", [](Json& tj, Json&) {
    tj["pre_tokenizer"]["pretokenizers"][1] = Json{{"type", "WhitespaceSplit"}};
  });
  expect_error([&] { TextTokenizer::from_folder(dir); },
               {"WhitespaceSplit", dir + "/tokenizer.json", "pretokenizers[1]"});
}

TEST(TextTokenizer, UnsupportedRegexAndModelAreRefused) {
  const std::string regex = R"((?i:'s|'t)|[^\r\n\p{L}\p{N}]?\p{L}+)";
  const std::string split = edited_folder("llama3_split", [&](Json& tj, Json&) {
    tj["pre_tokenizer"]["pretokenizers"][0] =
        Json{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}};
  });
  expect_error([&] { TextTokenizer::from_folder(split); }, {"Split pattern", "(?i:", "tokenizer.json"});
  const std::string wordpiece =
      edited_folder("wordpiece", [](Json& tj, Json&) { tj["model"]["type"] = "WordPiece"; });
  expect_error([&] { TextTokenizer::from_folder(wordpiece); }, {"WordPiece", "tokenizer.json: model"});
  const std::string cls =
      edited_folder("llama_class", [](Json&, Json& cfg) { cfg["tokenizer_class"] = "LlamaTokenizer"; });
  expect_error([&] { TextTokenizer::from_folder(cls); }, {"LlamaTokenizer", "tokenizer_config.json"});
}

TEST(TextTokenizer, MissingFilesAreRefusedNamingThePath) {
  const std::string dir = testing::make_temp_dir("tokenizer_missing");
  std::ofstream(dir + "/tokenizer_config.json")
      << load(kData + "smolvla_tiny_vlm/tokenizer_config.json").dump();
  expect_error([&] { TextTokenizer::from_folder(dir); },
               {"tokenizer.json is missing", dir + "/tokenizer.json"});
  const std::string empty = testing::make_temp_dir("tokenizer_empty");
  expect_error([&] { TextTokenizer::from_folder(empty); }, {empty + "/tokenizer_config.json"});
  const std::string no_pad = edited_folder("no_pad", [](Json&, Json& cfg) { cfg.erase("pad_token"); });
  const auto tok = TextTokenizer::from_folder(no_pad);
  expect_error([&] { tok.encode_batch({"a"}, 4, true, true); }, {"pad_token", "tokenizer_config.json"});
}

TEST(TextTokenizer, UnknownTokensAndNamesThrow) {
  const auto tok = TextTokenizer::from_folder(kData + "smolvla_tiny_vlm");
  expect_error([&] { tok.token_id("<not_a_token>"); }, {"<not_a_token>", "tokenizer.json"});
  expect_error([&] { tok.special_token("video_token"); }, {"video_token", "tokenizer_config.json"});
  EXPECT_EQ(tok.token_id("<|im_end|>"), tok.pad_token_id());
}

TEST(TextTokenizer, BadTextAndLengthsAreRefused) {
  const auto tok = TextTokenizer::from_folder(kData + "smolvla_tiny_vlm");
  expect_error([&] { tok.encode("ok \xff"); }, {"not valid UTF-8", "offset 3"});
  expect_error([&] { tok.encode("\xed\xa0\x80"); }, {"not valid UTF-8"});  // a UTF-16 surrogate
  expect_error([&] { tok.encode("\xc0\xaf"); }, {"not valid UTF-8"});      // overlong '/'
  expect_error([&] { tok.encode_batch({"a long text here"}, 2, false, true, false); }, {"truncation is off"});
  const auto templ = TextTokenizer::from_folder(kData + "text_tokenizer/bytelevel_template");
  // "<s> $A </s>" leaves no room for text under max_length 2.
  expect_error([&] { templ.encode_batch({"a"}, 1, true, true); }, {"max_length 1", "at least 2"});
  const auto two = templ.encode_batch({"pick up the red cube", ""}, 2, true, true);
  EXPECT_EQ(rows_of(two.input_ids), (std::vector<std::vector<int64_t>>{{0, 1}, {0, 1}}));
  // NFC: a decomposed é would be composed by Python; refused rather than tokenized differently.
  expect_error([&] { templ.encode("caf\x65\xcc\x81"); }, {"U+0301", "NFC"});
}

}  // namespace
}  // namespace lerobot
