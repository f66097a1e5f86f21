// Flag parsing and application for configs (see flags.h).
#include "lerobot/common/config/flags.h"

#include <algorithm>
#include <iomanip>

#include "lerobot/common/strings.h"

namespace lerobot {
namespace {

void gather_paths(Config& c, const std::string& prefix, std::vector<std::string>& out) {
  for (auto& f : collect_fields(c)) {
    const std::string p = prefix + f.name;
    if (f.nested) {
      gather_paths(*f.nested, p + ".", out);
    } else if (f.choice) {
      out.push_back(p + ".type");
      if (f.choice->get()) gather_paths(*f.choice->get(), p + ".", out);
    } else {
      out.push_back(p);
    }
  }
}

[[noreturn]] void unknown_flag(Config& root, const std::string& key) {
  std::vector<std::string> known = flag_paths(root);
  known.push_back("config_path");  // taken before the fields (apply_flags), a flag all the same
  const std::string near = nearest(key, known);
  throw_usage("unknown flag '--" + key + "'", "--" + key,
              near.empty() ? "run with --help to list the valid flags" : "did you mean '--" + near + "'?");
}

void apply_path(Config& root, Config& node, const std::vector<std::string>& parts, size_t i,
                const Flag& flag) {
  for (auto& f : collect_fields(node)) {
    if (f.name != parts[i]) continue;
    const bool leaf = i + 1 == parts.size();
    const std::string path = join(std::vector<std::string>(parts.begin(), parts.begin() + i + 1), ".");
    if (f.nested) {
      if (leaf) f.set_text(flag.value, path);
      else apply_path(root, *f.nested, parts, i + 1, flag);
      return;
    }
    if (f.choice) {
      if (leaf) {
        f.set_text(flag.value, path);
      } else if (i + 2 == parts.size() && parts[i + 1] == "type") {
        f.choice->set_type(flag.value, "--" + flag.key);
      } else {
        if (f.choice->get() == nullptr)
          throw_usage("'--" + flag.key + "' given but '" + path + "' has no type", "--" + flag.key,
                      "add --" + path + ".type=<" + join(f.choice->choices(), "|") + ">");
        apply_path(root, *f.choice->get(), parts, i + 1, flag);
      }
      return;
    }
    if (!leaf && f.type_name == "json") {
      // A key inside a dict-valued field (--dataset.image_transforms.tfs.brightness.weight=2):
      // set that one entry, creating the dicts on the way.
      Json whole = f.get();
      Json* node = &whole;
      for (size_t k = i + 1; k < parts.size(); ++k) {
        if (!node->is_object()) *node = Json::object();
        node = &(*node)[parts[k]];
      }
      *node = detail::parse_literal(flag.value, flag.key);
      f.set_json(whole, path);
      return;
    }
    if (!leaf) unknown_flag(root, flag.key);
    f.set_text(flag.value, flag.key);
    return;
  }
  unknown_flag(root, flag.key);
}

std::string short_json(const Json& j) {
  std::string s = j.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

void help_fields(Config& c, const std::string& prefix, std::ostream& os) {
  for (auto& f : collect_fields(c)) {
    const std::string p = prefix + f.name;
    if (f.nested) {
      help_fields(*f.nested, p + ".", os);
      continue;
    }
    if (f.choice) {
      const auto choices = f.choice->choices();
      os << "  --" << std::left << std::setw(44) << (p + ".type={" + join(choices, ",") + "}") << " "
         << f.help << " (default: " << (f.choice->type().empty() ? "None" : f.choice->type()) << ")\n";
      for (const auto& t : choices) {
        os << "\n  options of --" << p << ".type=" << t << ":\n";
        auto inst = f.choice->make(t);
        help_fields(*inst, p + ".", os);
      }
      os << "\n";
      continue;
    }
    os << "  --" << std::left << std::setw(44) << (p + "=<" + f.type_name + ">") << " " << f.help
       << " (default: " << short_json(f.get()) << ")\n";
  }
}

}  // namespace

std::vector<Flag> parse_flag_words(const std::vector<std::string>& words) {
  std::vector<Flag> out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!starts_with(w, "--") || w.size() == 2)
      throw_usage("unexpected argument '" + w + "'", w, "flags look like --key=value (see --help)");
    const auto eq = w.find('=');
    if (eq != std::string::npos) {
      out.push_back({w.substr(2, eq - 2), w.substr(eq + 1)});
    } else if (i + 1 < words.size() && !starts_with(words[i + 1], "--")) {
      out.push_back({w.substr(2), words[i + 1]});
      ++i;
    } else {
      throw_usage("flag '" + w + "' has no value", w, "write " + w + "=<value>");
    }
    std::replace(out.back().key.begin(), out.back().key.end(), '-', '_');
  }
  return out;
}

std::string take_flag(std::vector<Flag>& flags, const std::string& key, bool* found) {
  std::string value;
  bool hit = false;
  for (auto it = flags.begin(); it != flags.end();) {
    if (it->key == key) {
      value = it->value;
      hit = true;
      it = flags.erase(it);
    } else {
      ++it;
    }
  }
  if (found) *found = hit;
  return value;
}

void apply_flag(Config& root, const Flag& flag) {
  apply_path(root, root, split(flag.key, '.'), 0, flag);
}

void apply_flags(Config& root, std::vector<Flag> flags) {
  bool has_path = false;
  const std::string config_path = take_flag(flags, "config_path", &has_path);
  if (has_path) apply_json(root, load_json_or_yaml(config_path), "");
  // Choice types before the fields that live under them, shallow before deep.
  std::stable_sort(flags.begin(), flags.end(), [](const Flag& a, const Flag& b) {
    const bool ta = ends_with(a.key, ".type"), tb = ends_with(b.key, ".type");
    if (ta != tb) return ta;
    if (ta) return std::count(a.key.begin(), a.key.end(), '.') < std::count(b.key.begin(), b.key.end(), '.');
    return false;
  });
  for (const auto& f : flags) apply_flag(root, f);
  validate_tree(root);
}

std::vector<std::string> flag_paths(Config& root) {
  std::vector<std::string> out;
  gather_paths(root, "", out);
  return out;
}

void print_help(Config& root, std::ostream& os) {
  os << "  --" << std::left << std::setw(44) << "config_path=<path>"
     << " a YAML or JSON config applied before the other flags (default: null)\n";
  help_fields(root, "", os);
}

}  // namespace lerobot
