// The flag walk's engine (see flag_walk_helpers.h; the rule is stated in test_flag_walk.cpp).
#include "flag_walk_helpers.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

namespace lerobot::testing::flag_walk {
namespace {

namespace fs = std::filesystem;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && space(s[b])) ++b;
  while (e > b && space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// Words that may stand before a name without declaring it (`return cfg;`).
bool not_a_type(const std::string& w) {
  static const std::set<std::string> k = {"return", "case",   "throw",  "else",     "do",     "new",
                                          "delete", "sizeof", "goto",   "co_return", "if",    "for",
                                          "while",  "switch", "catch",  "and",      "or",     "not",
                                          "typename", "decltype", "operator", "using", "namespace",
                                          "default", "static_assert", "const", "public", "private",
                                          "protected", "template", "struct", "class", "enum", "co_await"};
  return w.empty() || std::isdigit(static_cast<unsigned char>(w[0])) || k.count(w) > 0;
}

// Code with comments and preprocessor lines removed and every string or character literal
// replaced by "" (or ''); line breaks kept. `literals` maps the position of each "" to the text.
struct Stripped {
  std::string code;
  std::map<size_t, std::string> literals;
};

Stripped strip(const std::string& t) {
  Stripped s;
  std::string& out = s.code;
  out.reserve(t.size());
  const size_t n = t.size();
  bool line_start = true;
  for (size_t i = 0; i < n;) {
    const char c = t[i];
    if (line_start && c == '#') {  // a preprocessor line, with its continuations
      while (i < n && t[i] != '\n') {
        if (t[i] == '\\' && i + 1 < n && t[i + 1] == '\n') {
          out += '\n';
          i += 2;
          continue;
        }
        ++i;
      }
      continue;
    }
    if (c == '\n') line_start = true;
    else if (!space(c)) line_start = false;
    if (c == '/' && i + 1 < n && t[i + 1] == '/') {
      while (i < n && t[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && t[i + 1] == '*') {
      for (i += 2; i < n && !(t[i] == '*' && i + 1 < n && t[i + 1] == '/'); ++i)
        if (t[i] == '\n') out += '\n';
      i += 2;
      continue;
    }
    const bool raw = c == 'R' && i + 1 < n && t[i + 1] == '"' &&
                     (i == 0 || !ident_char(t[i - 1]) ||
                      ((t[i - 1] == 'u' || t[i - 1] == 'U' || t[i - 1] == 'L' || t[i - 1] == '8') &&
                       (i < 2 || !ident_char(t[i - 2]) || t[i - 2] == 'u')));
    if (raw) {
      const size_t open = t.find('(', i + 2);
      const std::string close = ")" + t.substr(i + 2, open - i - 2) + "\"";
      const size_t end = t.find(close, open);
      const std::string content = t.substr(open + 1, end - open - 1);
      s.literals[out.size()] = content;
      out += "\"\"";
      out.append(std::count(content.begin(), content.end(), '\n'), '\n');
      i = end + close.size();
      continue;
    }
    if (c == '"') {
      std::string content;
      size_t j = i + 1;
      for (; j < n && t[j] != '"' && t[j] != '\n'; ++j) {
        if (t[j] == '\\' && j + 1 < n) content += t[j++];
        content += t[j];
      }
      s.literals[out.size()] = content;
      out += "\"\"";
      i = j + 1;
      continue;
    }
    if (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(t[i - 1])) && i + 1 < n &&
                       std::isxdigit(static_cast<unsigned char>(t[i + 1])))) {  // not a digit separator
      size_t j = i + 1;
      for (; j < n && t[j] != '\'' && t[j] != '\n'; ++j)
        if (t[j] == '\\') ++j;
      out += "''";
      i = j + 1;
      continue;
    }
    out += c;
    ++i;
  }
  return s;
}

// The position of the bracket that opens the one closing at `close`, or npos.
size_t match_back(const std::string& code, size_t close, char open_c, char close_c) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (code[i] == close_c) ++depth;
    else if (code[i] == open_c && --depth == 0) return i;
  }
  return std::string::npos;
}

// A type as written -> the struct name it stands for: cv, references, pointers, namespaces and
// the wrappers optional / unique_ptr / shared_ptr / reference_wrapper / ChoicePtr dropped. ""
// for any other template (containers) or a non-name.
std::string norm_type(std::string t) {
  static const std::regex words("\\b(const|volatile|mutable|static|inline|constexpr|typename|struct|class)\\b");
  t = std::regex_replace(t, words, " ");
  t.erase(std::remove_if(t.begin(), t.end(), [](char c) { return c == '&' || c == '*' || space(c); }), t.end());
  static const std::regex wrap("^(?:[\\w:]*::)?(optional|unique_ptr|shared_ptr|reference_wrapper|ChoicePtr)<(.*)>$");
  std::smatch m;
  while (std::regex_match(t, m, wrap)) t = m[2].str();
  if (t.find('<') != std::string::npos) return "";
  const size_t p = t.rfind("::");
  if (p != std::string::npos) t = t.substr(p + 2);
  if (t.empty() || !std::all_of(t.begin(), t.end(), ident_char) || std::isdigit(static_cast<unsigned char>(t[0])))
    return "";
  return t;
}

bool is_choice_type(const std::string& t) { return std::regex_search(t, std::regex("\\bChoicePtr\\s*<")); }

}  // namespace

std::vector<SourceFile> read_source_tree(const std::string& root) {
  std::vector<SourceFile> out;
  for (const char* top : {"src", "apps"}) {
    if (!fs::exists(fs::path(root) / top)) continue;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(root) / top)) {
      const auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      out.push_back({fs::relative(e.path(), root).generic_string(), ss.str()});
    }
  }
  std::sort(out.begin(), out.end(), [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
  return out;
}

std::string command_of(const std::string& path) {
  if (starts_with(path, "src/lerobot/train/")) return "train";
  if (starts_with(path, "apps/lerobot-cpp/")) {
    const std::string stem = fs::path(path).stem().string();
    for (const char* cmd : {"train", "eval", "infer", "dataset", "estimate"})
      if (stem == cmd || starts_with(stem, std::string(cmd) + "_")) return cmd;
  }
  return "";
}

std::vector<HelpFlag> config_flags_of_help(const std::string& help) {
  static const std::regex header("^\\s*options of --([A-Za-z0-9_.]+)\\.type=([A-Za-z0-9_-]+):");
  static const std::regex flag("^  --([A-Za-z0-9_.]+)=");
  std::map<std::string, std::string> current;  // choice prefix -> type listed now
  std::vector<HelpFlag> out;
  std::set<std::string> seen;
  // The config's flags follow a "flags:" line when the usage has one (train's launcher flags,
  // above it, are no config fields).
  const size_t start = help.rfind("\nflags:\n");
  std::istringstream in(start == std::string::npos ? help : help.substr(start));
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, header)) {
      current[m[1]] = m[2];
      continue;
    }
    if (!std::regex_search(line, m, flag)) continue;
    HelpFlag f{m[1], {}};
    std::string id = f.key;
    for (const auto& [prefix, type] : current)
      if (starts_with(f.key, prefix + ".")) {
        f.choices[prefix] = type;
        id += " " + prefix + "=" + type;
      }
    if (seen.insert(id).second) out.push_back(f);
  }
  return out;
}

std::vector<std::string> named_flags_of_help(const std::string& help) {
  static const std::regex flag("(?:^|[^A-Za-z0-9_-])--([A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_])");
  std::vector<std::string> out;
  std::set<std::string> seen = {"help", "flag"};
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator(); ++it)
    if (seen.insert((*it)[1]).second) out.push_back((*it)[1]);
  return out;
}

// ---- the source model ---------------------------------------------------------------------------

struct SourceModel::Impl {
  enum class Kind { kNamespace, kStruct, kFunction, kBlock, kData };
  struct Context {
    std::string cls;  // the struct whose body or member function this is ("" outside any)
    std::string fn;   // the function ("" in a struct or namespace body; "<init>" a variable's initializer)
    int fn_id = -1;
  };
  struct Scope {
    Kind kind;
    Context ctx;
  };
  struct Segment {  // a stretch of one file's code in one scope, between braces
    size_t begin, end;
    Kind kind;
    Context ctx;
  };
  struct File {
    std::string path, command, pair_key;
    std::string code;
    std::map<size_t, std::string> literals;
    std::vector<size_t> line_starts;
    std::vector<Segment> segments;
    int line_of(size_t pos) const {
      return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), pos) - line_starts.begin());
    }
    const Segment* segment_at(size_t pos) const {
      auto it = std::upper_bound(segments.begin(), segments.end(), pos,
                                 [](size_t p, const Segment& s) { return p < s.begin; });
      if (it == segments.begin()) return nullptr;
      --it;
      return pos < it->end ? &*it : nullptr;
    }
  };
  struct Struct {
    std::vector<std::string> bases;
    std::map<std::string, std::string> members;  // name -> type as written
  };
  struct FieldDecl {
    std::string owner, key, member;
  };

  std::vector<File> files;
  std::map<std::string, Struct> structs;
  std::vector<FieldDecl> decls;
  std::multimap<std::string, std::string> registry;  // choice name -> struct
  std::map<int, std::pair<int, std::string>> fn_heads;  // fn_id -> (file, text before its '{')
  int next_fn_id = 0;
  mutable std::map<std::string, std::string> read_cache;

  explicit Impl(const std::vector<SourceFile>& sources) {
    for (const auto& s : sources) {
      File f;
      f.path = s.path;
      f.command = command_of(s.path);
      f.pair_key = (fs::path(s.path).parent_path() / fs::path(s.path).stem()).string();
      Stripped st = strip(s.text);
      f.code = std::move(st.code);
      f.literals = std::move(st.literals);
      f.line_starts.push_back(0);
      for (size_t i = 0; i < f.code.size(); ++i)
        if (f.code[i] == '\n') f.line_starts.push_back(i + 1);
      files.push_back(std::move(f));
    }
    for (int i = 0; i < static_cast<int>(files.size()); ++i) parse_scopes(i);
    for (int i = 0; i < static_cast<int>(files.size()); ++i) {
      parse_members_and_fields(i);
      parse_registrations(i);
    }
  }

  // ---- parsing ----

  Scope classify(std::string head, const Scope& parent, int file) {
    static const std::regex access("^\\s*(public|private|protected)\\s*:(?!:)");
    head = trim(head);
    for (std::smatch m; std::regex_search(head, m, access);) head = trim(m.suffix().str());
    if (parent.kind == Kind::kFunction || parent.kind == Kind::kBlock) return {Kind::kBlock, parent.ctx};
    if (parent.kind == Kind::kData) return {Kind::kData, parent.ctx};
    static const std::regex enum_re("\\benum\\b");
    if (std::regex_search(head, enum_re)) return {Kind::kData, parent.ctx};
    static const std::regex ns("(^|[^\\w])(namespace(\\s+[\\w:]+)?|extern\\s*\"\")\\s*$");
    if (std::regex_search(head, ns)) return {Kind::kNamespace, parent.ctx};
    static const std::regex strct("(?:^|[^\\w])(?:struct|class|union)\\s+(\\w+)\\s*(?:final\\s*)?(?::([^;{}]*))?$");
    std::smatch m;
    if (head.find('=') == std::string::npos && std::regex_search(head, m, strct)) {
      Struct& s = structs[m[1]];
      std::string bases = m[2];
      std::stringstream ss(bases);
      int depth = 0;
      std::string part;
      for (char c : bases + ",") {  // split at top-level commas
        if (c == '<') ++depth;
        if (c == '>') --depth;
        if (c == ',' && depth == 0) {
          static const std::regex access_words("\\b(public|private|protected|virtual)\\b");
          std::string b = trim(std::regex_replace(part, access_words, " "));
          const size_t lt = b.find('<');
          if (lt != std::string::npos) b = trim(b.substr(0, lt));
          const size_t p = b.rfind("::");
          if (p != std::string::npos) b = b.substr(p + 2);
          if (!b.empty()) s.bases.push_back(b);
          part.clear();
          continue;
        }
        part += c;
      }
      return {Kind::kStruct, {m[1], "", -1}};
    }
    const size_t paren = head.find('(');
    if (paren != std::string::npos) {
      const std::string before = head.substr(0, paren);
      static const std::regex name_re("([A-Za-z_~][\\w:~]*)\\s*$");
      std::smatch fm;
      if ((before.find('=') == std::string::npos || before.find("operator") != std::string::npos) &&
          std::regex_search(before, fm, name_re)) {
        std::vector<std::string> parts;
        std::string q = fm[1], cur;
        for (size_t i = 0; i < q.size(); ++i) {
          if (q.compare(i, 2, "::") == 0) {
            parts.push_back(cur);
            cur.clear();
            ++i;
          } else {
            cur += q[i];
          }
        }
        parts.push_back(cur);
        static const std::set<std::string> control = {"if", "for", "while", "switch", "catch", "return"};
        if (!control.count(parts.back())) {
          const std::string cls = parts.size() >= 2 ? parts[parts.size() - 2] : parent.ctx.cls;
          const int id = next_fn_id++;
          fn_heads[id] = {file, head};
          return {Kind::kFunction, {cls, parts.back(), id}};
        }
      }
    }
    if (head.find('=') != std::string::npos && parent.kind == Kind::kNamespace) {
      const int id = next_fn_id++;  // a namespace-scope variable's initializer (a table, a lambda)
      fn_heads[id] = {file, ""};
      return {Kind::kFunction, {parent.ctx.cls, "<init>", id}};
    }
    return {Kind::kData, parent.ctx};
  }

  void parse_scopes(int fi) {
    File& f = files[fi];
    const std::string& code = f.code;
    std::vector<Scope> stack = {{Kind::kNamespace, {}}};
    size_t head_start = 0, seg_begin = 0;
    auto add = [&](size_t b, size_t e) {
      if (e > b) f.segments.push_back({b, e, stack.back().kind, stack.back().ctx});
    };
    for (size_t i = 0; i < code.size(); ++i) {
      const char c = code[i];
      if (c == ';') {
        head_start = i + 1;
      } else if (c == '{') {
        Scope scope = classify(code.substr(head_start, i - head_start), stack.back(), fi);
        if (scope.kind == Kind::kFunction && stack.back().kind != Kind::kFunction &&
            stack.back().kind != Kind::kBlock) {
          // A function's head (parameters, a constructor's initializer list) is part of it.
          add(seg_begin, std::max(seg_begin, head_start));
          seg_begin = std::max(seg_begin, head_start);
          stack.push_back(scope);
          add(seg_begin, i);
        } else {
          add(seg_begin, i);
          stack.push_back(scope);
        }
        seg_begin = head_start = i + 1;
      } else if (c == '}') {
        add(seg_begin, i);
        if (stack.size() > 1) stack.pop_back();
        seg_begin = head_start = i + 1;
      }
    }
    add(seg_begin, code.size());
  }

  void parse_members_and_fields(int fi) {
    const File& f = files[fi];
    static const std::regex access("^\\s*(public|private|protected)\\s*:(?!:)");
    static const std::regex skip("^(using|typedef|friend|template|static_assert|struct|class|enum|union|return)\\b");
    static const std::regex field_re("\\bfield\\s*\\(\\s*\\w+\\s*,\\s*(\"\")\\s*,\\s*(\\w+)\\s*[,)]");
    for (const auto& seg : f.segments) {
      const std::string text = f.code.substr(seg.begin, seg.end - seg.begin);
      if (seg.kind == Kind::kStruct) {
        std::stringstream ss(text);
        std::string stmt;
        while (std::getline(ss, stmt, ';')) {
          std::string s = trim(stmt);
          for (std::smatch m; std::regex_search(s, m, access);) s = trim(m.suffix().str());
          if (s.empty() || std::regex_search(s, skip)) continue;
          // Declarators, split at top-level commas: `int64_t w = 384, h = 384`.
          std::vector<std::string> declarators(1);
          int depth = 0;
          for (char c : s) {
            if (c == '<' || c == '(' || c == '{' || c == '[') ++depth;
            if (c == '>' || c == ')' || c == '}' || c == ']') --depth;
            if (c == ',' && depth == 0) declarators.emplace_back();
            else declarators.back() += c;
          }
          std::string type;
          for (size_t k = 0; k < declarators.size(); ++k) {
            std::string d = declarators[k];
            const size_t init = d.find_first_of("={");
            if (init != std::string::npos) d = d.substr(0, init);
            d = trim(d);
            if (d.find('(') != std::string::npos) break;  // a function
            while (!d.empty() && d.back() == ']') d = trim(d.substr(0, d.rfind('[')));
            size_t w = d.size();
            while (w > 0 && ident_char(d[w - 1])) --w;
            const std::string name = d.substr(w);
            if (k == 0) type = trim(d.substr(0, w));
            if (name.empty() || type.empty() || ends_with(type, "::") || not_a_type(name)) break;
            structs[seg.ctx.cls].members[name] = type;
          }
        }
      }
      if (seg.ctx.cls.empty() || text.find("field") == std::string::npos) continue;
      for (auto it = std::sregex_iterator(text.begin(), text.end(), field_re); it != std::sregex_iterator(); ++it) {
        const auto lit = f.literals.find(seg.begin + (*it).position(1));
        if (lit != f.literals.end()) decls.push_back({seg.ctx.cls, lit->second, (*it)[2]});
      }
    }
  }

  // Registry<Base>::add("name", [] { return std::make_unique<Struct>(); }) and aliases of it.
  void parse_registrations(int fi) {
    const File& f = files[fi];
    static const std::regex add_re("^::\\s*add\\s*\\(\\s*(\"\")\\s*,[^;]*?make_unique\\s*<\\s*([\\w:]+)\\s*>");
    for (size_t p = f.code.find("::"); p != std::string::npos; p = f.code.find("::", p + 2)) {
      if (f.code.compare(p, 2, "::") != 0) continue;
      const size_t end = f.code.find(';', p);
      const std::string stmt = f.code.substr(p, end == std::string::npos ? std::string::npos : end - p);
      std::smatch m;
      if (stmt.compare(0, 2, "::") != 0 || stmt.find("add") == std::string::npos || !std::regex_search(stmt, m, add_re))
        continue;
      const auto lit = f.literals.find(p + m.position(1));
      if (lit != f.literals.end()) registry.emplace(lit->second, norm_type(m[2]));
    }
  }

  // ---- types ----

  bool derives_from(const std::string& type, const std::string& base, int depth = 0) const {
    if (type.empty() || depth > 16) return false;
    if (type == base) return true;
    auto it = structs.find(type);
    if (it == structs.end()) return false;
    for (const auto& b : it->second.bases)
      if (derives_from(b, base, depth + 1)) return true;
    return false;
  }

  // The type (as written) of member `name` of `type` or a base; "" when none.
  std::string member_type(const std::string& type, const std::string& name, int depth = 0) const {
    auto it = structs.find(type);
    if (it == structs.end() || depth > 16) return "";
    auto m = it->second.members.find(name);
    if (m != it->second.members.end()) return m->second;
    for (const auto& b : it->second.bases) {
      const std::string t = member_type(b, name, depth + 1);
      if (!t.empty()) return t;
    }
    return "";
  }

  // The struct among `type` and its bases that declares member `name`; "" when none.
  std::string member_owner(const std::string& type, const std::string& name, int depth = 0) const {
    auto it = structs.find(type);
    if (it == structs.end() || depth > 16) return "";
    if (it->second.members.count(name)) return type;
    for (const auto& b : it->second.bases) {
      const std::string o = member_owner(b, name, depth + 1);
      if (!o.empty()) return o;
    }
    return "";
  }

  static std::string known(const std::string& t) { return t.empty() ? "?" : t; }
  // The type of a name declared with a template parameter's type: it may be any struct.
  static constexpr const char* kAnyType = "<template parameter>";

  // `type` is a template parameter of the function `seg` is in (`template <class Config>`).
  bool is_template_parameter(const std::string& type, const Segment* seg) const {
    if (!seg || seg->ctx.fn_id < 0 || type.find(':') != std::string::npos) return false;
    auto head = fn_heads.find(seg->ctx.fn_id);
    if (head == fn_heads.end()) return false;
    const std::regex param("\\btemplate\\s*<[^;{}]*\\b(class|typename)\\s+" + type + "\\b");
    return head->second.second.find("template") != std::string::npos && std::regex_search(head->second.second, param);
  }

  // The types member `name` has in any struct (the last resort of a lookup).
  std::set<std::string> any_member_types(const std::string& name) const {
    std::set<std::string> out;
    for (const auto& [s, info] : structs) {
      auto m = info.members.find(name);
      if (m != info.members.end()) out.insert(known(norm_type(m->second)));
    }
    return out;
  }

  std::set<std::string> member_types(const std::string& type, const std::string& name) const {
    if (type == kAnyType) return {kAnyType};
    if (type != "?" && structs.count(type)) {
      const std::string t = member_type(type, name);
      if (!t.empty()) return {known(norm_type(t))};
    }
    return any_member_types(name);
  }

  // Declarations of `name` in code[begin, end): `Type name`, `Type& name`, `auto name = expr`.
  std::set<std::string> declared_types(const File& f, const std::string& code, size_t begin, size_t end,
                                       const std::string& name, const Segment* seg, int depth) const {
    std::set<std::string> out;
    for (size_t p = code.find(name, begin); p != std::string::npos && p < end; p = code.find(name, p + 1)) {
      const size_t q = p + name.size();
      if ((p > 0 && ident_char(code[p - 1])) || (q < code.size() && ident_char(code[q]))) continue;
      size_t a = q;
      while (a < code.size() && space(code[a])) ++a;
      if (a >= code.size() || std::string("=;,){(:[").find(code[a]) == std::string::npos) continue;
      if (code[a] == ':' && a + 1 < code.size() && code[a + 1] == ':') continue;
      if (code[a] == '=' && a + 1 < code.size() && code[a + 1] == '=') continue;
      size_t b = p;
      while (b > 0 && space(code[b - 1])) --b;
      const bool space_before_name = b < p;
      const size_t sym_end = b;
      while (b > 0 && (code[b - 1] == '&' || code[b - 1] == '*')) --b;
      const bool sym = b < sym_end;
      const size_t sym_begin = b;
      while (b > 0 && space(code[b - 1])) --b;
      if (b == 0 || (sym && space_before_name && b < sym_begin)) continue;  // `a * name`: an operator
      std::string type;
      if (code[b - 1] == '>') {
        const size_t lt = match_back(code, b - 1, '<', '>');
        static const std::regex type_args("^[\\w:<>,\\s*&]*$");
        if (lt == std::string::npos || b - lt > 200) continue;
        const std::string args = code.substr(lt + 1, b - 2 - lt);
        if (args.find("&&") != std::string::npos || !std::regex_match(args, type_args)) continue;
        size_t w = lt;
        while (w > 0 && (ident_char(code[w - 1]) || code[w - 1] == ':')) --w;
        type = code.substr(w, b - w);
      } else if (ident_char(code[b - 1])) {
        size_t w = b;
        while (w > 0 && (ident_char(code[w - 1]) || code[w - 1] == ':')) --w;
        type = code.substr(w, b - w);
        const size_t colon = type.rfind("::");
        if (not_a_type(colon == std::string::npos ? type : type.substr(colon + 2))) continue;
        // `a.b c` cannot be a declaration: `b` would be a member.
        size_t v = w;
        while (v > 0 && space(code[v - 1])) --v;
        if (v > 0 && (code[v - 1] == '.' || (v > 1 && code[v - 1] == '>' && code[v - 2] == '-'))) continue;
      } else {
        continue;
      }
      if (is_template_parameter(type, seg)) {
        out.insert(kAnyType);
        continue;
      }
      if (type == "auto") {
        if (code[a] != '=' || depth > 3) continue;
        size_t e = a + 1;  // the initializer ends at ';' or ',' or an unmatched closing bracket
        for (int level = 0; e < code.size(); ++e) {
          const char c = code[e];
          if (c == '(' || c == '[' || c == '{') ++level;
          if ((c == ')' || c == ']' || c == '}') && level-- == 0) break;
          if ((c == ';' || c == ',') && level == 0) break;
        }
        std::string expr = trim(code.substr(a + 1, e - a - 1));
        while (!expr.empty() && (expr[0] == '*' || expr[0] == '&')) expr = trim(expr.substr(1));
        for (const auto& t : expression_types(f, expr, expr.size(), seg, depth + 1)) out.insert(t);
      } else {
        out.insert(known(norm_type(type)));
      }
    }
    return out;
  }

  struct Link {
    enum Kind { kName, kType, kCall, kThis } kind;
    std::string text;
  };

  // The access chain that ends just before code[p] (the '.' or "->" of a member access), outermost
  // link first, its base last. False when it is no chain of names (a subscript, a literal, ...).
  bool chain_before(const std::string& code, size_t p, std::vector<Link>& links, int depth = 0) const {
    size_t j = p;
    while (depth < 4) {
      while (j > 0 && space(code[j - 1])) --j;
      if (j == 0) return false;
      const char c = code[j - 1];
      if (c == ')') {
        const size_t open = match_back(code, j - 1, '(', ')');
        if (open == std::string::npos) return false;
        size_t k = open;
        while (k > 0 && space(code[k - 1])) --k;
        if (k > 0 && code[k - 1] == '>') {  // as<T>(), static_cast<T>(x), make_unique<T>()
          const size_t lt = match_back(code, k - 1, '<', '>');
          if (lt == std::string::npos) return false;
          size_t w = lt;
          while (w > 0 && ident_char(code[w - 1])) --w;
          static const std::set<std::string> typed = {"as", "static_cast", "dynamic_cast", "reinterpret_cast",
                                                      "const_cast", "make_unique", "make_shared"};
          if (!typed.count(code.substr(w, lt - w))) return false;
          links.push_back({Link::kType, known(norm_type(code.substr(lt + 1, k - 2 - lt)))});
          return true;
        }
        if (k > 0 && ident_char(code[k - 1])) {
          size_t w = k;
          while (w > 0 && ident_char(code[w - 1])) --w;
          const std::string name = code.substr(w, k - w);
          if (not_a_type(name) && name != "operator") return false;
          size_t v = w;
          while (v > 0 && space(code[v - 1])) --v;
          const bool on_object = v > 0 && (code[v - 1] == '.' || (v > 1 && code[v - 1] == '>' && code[v - 2] == '-'));
          if (on_object && (name == "ptr" || name == "get" || name == "value")) {  // x.ptr()->m is x's
            j = code[v - 1] == '.' ? v - 1 : v - 2;
            continue;
          }
          links.push_back({Link::kCall, name});
          return true;
        }
        std::string inner = trim(code.substr(open + 1, j - 2 - open));  // (*cfg.policy).m
        while (!inner.empty() && (inner[0] == '*' || inner[0] == '&')) inner = trim(inner.substr(1));
        return chain_before(inner, inner.size(), links, depth + 1);
      }
      if (!ident_char(c)) return false;
      size_t w = j;
      while (w > 0 && ident_char(code[w - 1])) --w;
      const std::string name = code.substr(w, j - w);
      if (std::isdigit(static_cast<unsigned char>(name[0]))) return false;
      size_t k = w;
      while (k > 0 && space(code[k - 1])) --k;
      if (k > 0 && code[k - 1] == '.') {
        links.push_back({Link::kName, name});
        j = k - 1;
        continue;
      }
      if (k > 1 && code[k - 1] == '>' && code[k - 2] == '-') {
        links.push_back({Link::kName, name});
        j = k - 2;
        continue;
      }
      if (k > 1 && code[k - 1] == ':' && code[k - 2] == ':') return false;
      links.push_back({name == "this" ? Link::kThis : Link::kName, name});
      return true;
    }
    return false;
  }

  // The types `name` may have at a use in `seg` of `f`: its declaration in the same function (or
  // the function's parameters), else a member of the function's struct, else a declaration in the
  // file or its .h/.cpp pair, else a member of that name of any struct.
  std::set<std::string> variable_types(const File& f, const std::string& name, const Segment* seg, int depth) const {
    if (seg && seg->ctx.fn_id >= 0) {
      std::set<std::string> out;
      auto head = fn_heads.find(seg->ctx.fn_id);
      if (head != fn_heads.end())
        for (const auto& t : declared_types(f, head->second.second, 0, head->second.second.size(), name, seg, depth))
          out.insert(t);
      for (const auto& s : f.segments)
        if (s.ctx.fn_id == seg->ctx.fn_id)
          for (const auto& t : declared_types(f, f.code, s.begin, s.end, name, seg, depth)) out.insert(t);
      if (!out.empty()) return out;
    }
    if (seg && !seg->ctx.cls.empty()) {
      const std::string t = member_type(seg->ctx.cls, name);
      if (!t.empty()) return {known(norm_type(t))};
    }
    std::set<std::string> out;
    for (const auto& g : files)
      if (g.pair_key == f.pair_key)
        for (const auto& t : declared_types(g, g.code, 0, g.code.size(), name, nullptr, depth)) out.insert(t);
    if (!out.empty()) return out;
    return any_member_types(name);
  }

  // The types a call `name(...)` may return: its declarations in the file or its pair, else in any
  // file.
  std::set<std::string> return_types(const File& f, const std::string& name, int depth) const {
    std::set<std::string> out;
    for (int pass = 0; pass < 2 && out.empty(); ++pass)
      for (const auto& g : files)
        if ((pass == 0) == (g.pair_key == f.pair_key))
          for (const auto& t : declared_types(g, g.code, 0, g.code.size(), name, nullptr, depth + 1))
            if (t != "?") out.insert(t);
    return out;
  }

  std::set<std::string> expression_types(const File& f, const std::string& code, size_t end, const Segment* seg,
                                         int depth) const {
    std::vector<Link> links;
    if (depth > 3 || !chain_before(code, end, links)) return {};
    const Link& base = links.back();
    std::set<std::string> types;
    switch (base.kind) {
      case Link::kThis: types = {known(seg ? seg->ctx.cls : "")}; break;
      case Link::kType: types = {base.text}; break;
      case Link::kCall: types = return_types(f, base.text, depth); break;
      case Link::kName: types = variable_types(f, base.text, seg, depth); break;
    }
    for (size_t i = links.size() - 1; i-- > 0;) {
      std::set<std::string> next;
      for (const auto& t : types)
        for (const auto& u : member_types(t, links[i].text)) next.insert(u);
      types = std::move(next);
    }
    return types;
  }

  // ---- reads ----

  // A "--key" literal passed to a flag lookup (flag_value(args, "--policy.pretrained_revision"))
  // before the config is parsed, in code `command` runs.
  std::string find_prepass_read(const std::string& key, const std::string& command) const {
    for (const auto& f : files) {
      if (!f.command.empty() && f.command != command) continue;
      for (const auto& [pos, text] : f.literals) {
        if (text != "--" + key) continue;
        const Segment* seg = f.segment_at(pos);
        if (!seg || seg->ctx.fn.empty() || seg->ctx.fn == "validate") continue;
        int depth = 0;
        size_t open = std::string::npos;
        for (size_t i = pos; i-- > seg->begin;) {
          const char c = f.code[i];
          if (c == ')') ++depth;
          if (c == '(' && depth-- == 0) {
            open = i;
            break;
          }
        }
        if (open == std::string::npos) continue;
        size_t w = open;
        while (w > 0 && ident_char(f.code[w - 1])) --w;
        const std::string call = f.code.substr(w, open - w);
        if (call.find("flag") != std::string::npos && !starts_with(call, "throw"))
          return f.path + ":" + std::to_string(f.line_of(pos));
      }
    }
    return "";
  }

  std::string find_read(const std::string& owner, const std::string& member, const std::string& command) const {
    for (const auto& f : files) {
      if (!f.command.empty() && f.command != command) continue;
      const std::string& code = f.code;
      for (size_t p = code.find(member); p != std::string::npos; p = code.find(member, p + 1)) {
        const size_t q = p + member.size();
        if ((p > 0 && ident_char(code[p - 1])) || (q < code.size() && ident_char(code[q]))) continue;
        const Segment* seg = f.segment_at(p);
        if (!seg || seg->ctx.fn.empty() || seg->ctx.fn == "visit" || seg->ctx.fn == "validate") continue;
        size_t a = q;
        while (a < code.size() && space(code[a])) ++a;
        if (a < code.size() && code[a] == '(') continue;  // a call of a function of that name
        if (a + 1 < code.size() && code[a] == '=' && code[a + 1] != '=') continue;  // a write
        size_t b = p;
        while (b > 0 && space(code[b - 1])) --b;
        static const std::regex declaration("\\bfield\\s*\\(\\s*\\w+\\s*,\\s*\"\"\\s*,\\s*$");
        if (b > 0 && code[b - 1] == ',' && std::regex_search(code.substr(b > 80 ? b - 80 : 0, b - (b > 80 ? b - 80 : 0)), declaration))
          continue;  // field(v, "key", member, ...): the declaration
        const std::string where = f.path + ":" + std::to_string(f.line_of(p));
        if (b > 0 && (code[b - 1] == '.' || (b > 1 && code[b - 1] == '>' && code[b - 2] == '-'))) {
          for (const auto& t : expression_types(f, code, code[b - 1] == '.' ? b - 1 : b - 2, seg, 0))
            if (t == kAnyType || derives_from(t, owner)) return where;
          continue;
        }
        if (b > 1 && code[b - 1] == ':' && code[b - 2] == ':') continue;
        // Bare: a member function of the owner (or of a struct deriving from it), unless it
        // declares a local of that name.
        if (!derives_from(seg->ctx.cls, owner)) continue;
        if (!declared_types(f, code, p, q, member, seg, 0).empty()) continue;
        return where;
      }
    }
    return "";
  }
};

SourceModel::SourceModel(const std::vector<SourceFile>& files) : impl_(std::make_unique<Impl>(files)) {}
SourceModel::~SourceModel() = default;

bool SourceModel::derives_from(const std::string& type, const std::string& base) const {
  return impl_->derives_from(type, base);
}

Finding SourceModel::resolve(const HelpFlag& flag, const std::string& root) const {
  Finding out{flag.key, "", "", "", ""};
  std::string cur = root, prefix;
  std::vector<std::string> parts;
  std::stringstream ss(flag.key);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& name = parts[i];
    // The field() of `name` in `cur` or the nearest base that declares one.
    const Impl::FieldDecl* decl = nullptr;
    std::vector<std::string> chain = {cur};
    for (size_t k = 0; k < chain.size() && !decl && k < 64; ++k) {
      for (const auto& d : impl_->decls)
        if (d.owner == chain[k] && d.key == name) {
          decl = &d;
          break;
        }
      auto s = impl_->structs.find(chain[k]);
      if (s != impl_->structs.end()) chain.insert(chain.end(), s->second.bases.begin(), s->second.bases.end());
    }
    if (!decl) {
      out.problem = "no field(v, \"" + name + "\", ...) in " + cur + " or its bases";
      return out;
    }
    if (i + 1 == parts.size()) {
      // The owner is the struct that declares the member: the visit()'s own, or the base it
      // inherits the member from (AdamConfig declares OptimizerConfig's grad_clip_norm).
      out.owner = impl_->member_owner(decl->owner, decl->member);
      out.member = decl->member;
      if (out.owner.empty()) out.problem = "no member " + decl->member + " in " + decl->owner + " or its bases";
      return out;
    }
    const std::string type = impl_->member_type(decl->owner, decl->member);
    prefix += (prefix.empty() ? "" : ".") + name;
    if (is_choice_type(type)) {
      const std::string base = norm_type(type);
      auto chosen = flag.choices.find(prefix);
      if (chosen == flag.choices.end()) {
        out.problem = "--" + flag.key + " is not listed under an 'options of --" + prefix + ".type=...' header";
        return out;
      }
      cur.clear();
      auto range = impl_->registry.equal_range(chosen->second);
      for (auto it = range.first; it != range.second; ++it)
        if (impl_->derives_from(it->second, base)) cur = it->second;
      if (cur.empty()) {
        out.problem = "no registration of " + base + " type '" + chosen->second + "' (Registry<...>::add)";
        return out;
      }
    } else {
      cur = norm_type(type);
      if (cur.empty() || !impl_->structs.count(cur)) {
        out.problem = "the type of " + decl->owner + "::" + decl->member + " ('" + type + "') is not a struct of the sources";
        return out;
      }
    }
  }
  return out;
}

std::string SourceModel::read_at(const std::string& owner, const std::string& member, const std::string& command) const {
  const std::string key = owner + "::" + member + "@" + command;
  auto it = impl_->read_cache.find(key);
  if (it != impl_->read_cache.end()) return it->second;
  return impl_->read_cache[key] = impl_->find_read(owner, member, command);
}

std::vector<Finding> SourceModel::walk_config_flags(const std::string& help, const std::string& root,
                                                    const std::string& command) const {
  std::vector<Finding> out;
  std::set<std::string> seen;
  for (const auto& flag : config_flags_of_help(help)) {
    // --config_path and --X.type are taken by the config system itself (flags.cpp).
    if (flag.key == "config_path" || flag.key == "type" || ends_with(flag.key, ".type")) continue;
    Finding f = resolve(flag, root);
    if (!seen.insert(f.key + "|" + f.owner + "|" + f.member + "|" + f.problem).second) continue;
    if (f.problem.empty()) f.read_at = read_at(f.owner, f.member, command);
    if (f.problem.empty() && f.read_at.empty()) f.read_at = impl_->find_prepass_read(f.key, command);
    out.push_back(f);
  }
  return out;
}

std::vector<Finding> SourceModel::walk_named_flags(const std::string& help, const std::string& command_file) const {
  std::vector<Finding> out;
  const Impl::File* file = nullptr;
  for (const auto& f : impl_->files)
    if (f.path == command_file) file = &f;
  for (const auto& name : named_flags_of_help(help)) {
    Finding f{name, "", "", "", file ? "" : "no source file " + command_file};
    if (file) {
      for (const auto& [pos, text] : file->literals) {
        if (text != name) continue;
        // A key in a lookup: flags["name"], flags.count("name"), flag_true(a, "name").
        size_t b = pos, a = pos + 2;
        while (b > 0 && space(file->code[b - 1])) --b;
        while (a < file->code.size() && space(file->code[a])) ++a;
        const Impl::Segment* seg = file->segment_at(pos);
        if (b > 0 && std::string("([,").find(file->code[b - 1]) != std::string::npos && a < file->code.size() &&
            std::string(")]").find(file->code[a]) != std::string::npos && seg && !seg->ctx.fn.empty()) {
          f.read_at = file->path + ":" + std::to_string(file->line_of(pos));
          break;
        }
      }
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace lerobot::testing::flag_walk
