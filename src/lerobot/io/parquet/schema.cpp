// Builds the schema tree and per-leaf level information from the footer's flat schema list.
#include "lerobot/io/parquet/schema.h"

#include "lerobot/io/parquet/format_error.h"

namespace lerobot::parquet {

namespace {
constexpr int kMaxSchemaDepth = 64;
}

Schema::Schema(const std::vector<SchemaElement>& flat) {
  if (flat.empty()) fail("schema is empty");
  if (flat[0].has_type) fail("schema root is not a group");
  size_t pos = 0;
  build(flat, &pos, -1, 0);
  if (pos != flat.size()) fail("schema has elements outside the root's children");
  top_ = nodes_[0].children;
  for (int n : top_) top_names_.push_back(nodes_[n].element.name);
  // Leaves in depth-first order (the order of column chunks).
  for (size_t i = 0; i < nodes_.size(); ++i) {
    SchemaNode& n = nodes_[i];
    if (!n.element.has_type) continue;
    LeafInfo leaf;
    leaf.node = static_cast<int>(i);
    leaf.type = n.element.type;
    leaf.type_length = n.element.type_length;
    leaf.max_def = n.def_level;
    leaf.max_rep = n.rep_level;
    leaf.is_string = n.element.converted_type == kConvertedUtf8 ||
                     n.element.logical_type == kLogicalString;
    std::vector<int> chain;
    for (int c = static_cast<int>(i); c > 0; c = nodes_[c].parent) chain.insert(chain.begin(), c);
    for (int c : chain) {
      const SchemaNode& cn = nodes_[c];
      leaf.path.push_back(cn.element.name);
      if (cn.element.repetition == Repetition::kRepeated) {
        leaf.elem_def.push_back(cn.def_level);
        leaf.list_def.push_back(nodes_[cn.parent].def_level);
      }
    }
    for (size_t k = 0; k < leaf.path.size(); ++k) leaf.dotted += (k ? "." : "") + leaf.path[k];
    for (size_t t = 0; t < top_.size(); ++t)
      if (top_[t] == chain.front()) leaf.top = static_cast<int>(t);
    n.leaf = static_cast<int>(leaves_.size());
    leaves_.push_back(std::move(leaf));
  }
}

int Schema::build(const std::vector<SchemaElement>& flat, size_t* pos, int parent, int depth) {
  if (depth > kMaxSchemaDepth) fail("schema nested too deeply");
  if (*pos >= flat.size()) fail("schema: num_children exceeds the number of elements");
  const SchemaElement& e = flat[*pos];
  ++*pos;
  int idx = static_cast<int>(nodes_.size());
  nodes_.push_back(SchemaNode{});
  nodes_[idx].element = e;
  nodes_[idx].parent = parent;
  if (parent >= 0) {
    int16_t d = nodes_[parent].def_level, r = nodes_[parent].rep_level;
    if (e.repetition == Repetition::kOptional) ++d;
    if (e.repetition == Repetition::kRepeated) { ++d; ++r; }
    nodes_[idx].def_level = d;
    nodes_[idx].rep_level = r;
  }
  if (!e.has_type) {
    if (e.num_children == 0 && parent >= 0) fail("schema: group '" + e.name + "' has no children");
    if (static_cast<size_t>(e.num_children) > flat.size() - *pos)
      fail("schema: num_children exceeds the number of elements");
    for (int32_t c = 0; c < e.num_children; ++c) {
      int child = build(flat, pos, idx, depth + 1);
      nodes_[idx].children.push_back(child);
    }
  } else if (parent < 0) {
    fail("schema root is a leaf");
  }
  return idx;
}

int Schema::find_top(const std::string& name) const {
  for (size_t i = 0; i < top_names_.size(); ++i)
    if (top_names_[i] == name) return static_cast<int>(i);
  return -1;
}

std::vector<int> Schema::leaves_under(int top) const {
  std::vector<int> out;
  for (size_t i = 0; i < leaves_.size(); ++i)
    if (leaves_[i].top == top) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace lerobot::parquet
