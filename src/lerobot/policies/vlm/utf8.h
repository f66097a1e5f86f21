// Strict UTF-8 coding for the text tokenizer (text is handled as code points until the model looks
// tokens up) and the prompts built for it.
#pragma once

#include <string>

namespace lerobot {

// Strict UTF-8 decoding (no overlongs, surrogates or code points past U+10FFFF); a bad byte is a
// data error naming `where` and the byte offset.
std::u32string decode_utf8(const std::string& s, const std::string& where);
std::string encode_utf8(const std::u32string& s);
void append_utf8(char32_t c, std::string& out);

}  // namespace lerobot
