// The Unicode character classes the text tokenizer needs, from tables generated out of Python's
// unicodedata (scripts/gen_unicode_classes.py -> unicode_classes.cpp), so no ICU is needed.
#pragma once

#include <string>

namespace lerobot::unicode {

// General category L* (regex \p{L}).
bool is_letter(char32_t c);
// General category N* (regex \p{N}; Rust's char::is_numeric).
bool is_number(char32_t c);
// Regex \w, approximated as categories L*, M*, Nd, Nl, Pc and U+200C/U+200D.
bool is_word_char(char32_t c);
// The White_Space property (regex \s; Rust's char::is_whitespace).
bool is_whitespace(char32_t c);
// True when NFC could change a text holding `c` (a combining mark, NFC_Quick_Check No or Maybe).
bool is_nfc_unsafe(char32_t c);
// Appends c's lowercase form (Rust's char::to_lowercase: one code point, or two for U+0130).
void append_lowercase(char32_t c, std::u32string& out);

}  // namespace lerobot::unicode
