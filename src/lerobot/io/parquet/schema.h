// The Parquet schema as a tree: nodes from the flat footer list, leaf columns with their
// definition/repetition levels, and lookup of leaves under a top-level column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lerobot/io/parquet/metadata.h"

namespace lerobot::parquet {

struct SchemaNode {
  SchemaElement element;
  int parent = -1;
  std::vector<int> children;
  int16_t def_level = 0;  // definition level at which this node is present
  int16_t rep_level = 0;
  int leaf = -1;  // index into Schema::leaves(), -1 for groups
};

struct LeafInfo {
  std::vector<std::string> path;  // names from the top-level column down to the leaf
  std::string dotted;             // path joined with '.', for messages only
  int node = -1;
  int top = -1;  // index of the top-level column (Schema::top_level())
  Type type = Type::kInt32;
  int32_t type_length = 0;
  int16_t max_def = 0, max_rep = 0;
  // For list nesting level k (0-based, outermost first): the definition level at which the k-th
  // repeated node holds an element, and the level at which the list itself is non-null.
  std::vector<int16_t> elem_def, list_def;
  bool is_string = false;  // UTF8 / STRING annotation
};

class Schema {
 public:
  Schema() = default;
  explicit Schema(const std::vector<SchemaElement>& flat);  // throws FormatError

  const std::vector<SchemaNode>& nodes() const { return nodes_; }
  const std::vector<LeafInfo>& leaves() const { return leaves_; }
  const std::vector<int>& top_level() const { return top_; }  // node indices of root's children
  const std::vector<std::string>& top_level_names() const { return top_names_; }

  int find_top(const std::string& name) const;  // index into top_level(), -1 if absent
  // Leaves under top-level column `top` (index into top_level()).
  std::vector<int> leaves_under(int top) const;

 private:
  int build(const std::vector<SchemaElement>& flat, size_t* pos, int parent, int depth);
  std::vector<SchemaNode> nodes_;
  std::vector<LeafInfo> leaves_;
  std::vector<int> top_;
  std::vector<std::string> top_names_;
};

}  // namespace lerobot::parquet
