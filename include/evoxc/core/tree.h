// Tree<T>: pytrees of tuples, lists, string-keyed maps, none and leaves; flatten/unflatten with path errors.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"

namespace evoxc {

enum class TreeKind : uint8_t { None, Leaf, Tuple, List, Dict };

// Containers nest at most kMaxNestingDepth levels (core/limits.h): a deeper tree is refused
// with a ValidationError when it is built, so the recursive walkers below (flatten, map,
// structure_string, comparison, destruction) never meet one.
template <typename T>
class Tree {
 public:
  // A None node.
  Tree() = default;
  Tree(T leaf) : kind_(TreeKind::Leaf), leaf_(std::move(leaf)) {}  // NOLINT(google-explicit-constructor)

  static Tree none() { return Tree(); }
  static Tree tuple(std::vector<Tree> items) { return Tree(TreeKind::Tuple, std::move(items), {}); }
  static Tree list(std::vector<Tree> items) { return Tree(TreeKind::List, std::move(items), {}); }
  // Keys are kept sorted, so flattening order does not depend on insertion order.
  static Tree dict(std::map<std::string, Tree> items) {
    std::vector<Tree> values;
    std::vector<std::string> keys;
    for (auto& [k, v] : items) {
      keys.push_back(k);
      values.push_back(std::move(v));
    }
    return Tree(TreeKind::Dict, std::move(values), std::move(keys));
  }

  TreeKind kind() const { return kind_; }
  // Container levels: 0 for a leaf or None, 1 for a tuple of leaves.
  int depth() const { return depth_; }
  bool is_leaf() const { return kind_ == TreeKind::Leaf; }
  bool is_none() const { return kind_ == TreeKind::None; }
  const T& leaf() const {
    if (!leaf_) throw ValidationError("Tree: not a leaf (it is a " + std::string(kind_name(kind_)) + ")");
    return *leaf_;
  }
  T& leaf() {
    if (!leaf_) throw ValidationError("Tree: not a leaf (it is a " + std::string(kind_name(kind_)) + ")");
    return *leaf_;
  }
  const std::vector<Tree>& children() const { return children_; }
  const std::vector<std::string>& keys() const { return keys_; }
  size_t size() const { return children_.size(); }
  const Tree& operator[](size_t i) const {
    if (i >= children_.size()) throw ValidationError("Tree: index " + std::to_string(i) + " out of range");
    return children_[i];
  }
  const Tree& operator[](const std::string& key) const {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
    if (kind_ != TreeKind::Dict || it == keys_.end() || *it != key) throw ValidationError("Tree: no key '" + key + "'");
    return children_[static_cast<size_t>(it - keys_.begin())];
  }

  // Leaves in depth-first order (dict children by sorted key).
  std::vector<T> flatten() const {
    std::vector<T> out;
    flatten_into(out);
    return out;
  }
  void flatten_into(std::vector<T>& out) const {
    if (kind_ == TreeKind::Leaf) out.push_back(*leaf_);
    for (const auto& c : children_) c.flatten_into(out);
  }
  size_t num_leaves() const {
    if (kind_ == TreeKind::Leaf) return 1;
    size_t n = 0;
    for (const auto& c : children_) n += c.num_leaves();
    return n;
  }

  // The same structure with f applied to every leaf.
  template <typename F>
  auto map(F&& f) const -> Tree<decltype(f(std::declval<const T&>()))> {
    using U = decltype(f(std::declval<const T&>()));
    if (kind_ == TreeKind::Leaf) return Tree<U>(f(*leaf_));
    std::vector<Tree<U>> cs;
    cs.reserve(children_.size());
    for (const auto& c : children_) cs.push_back(c.map(f));
    return Tree<U>::from_parts(kind_, std::move(cs), keys_);
  }

  // Rebuilds this structure with leaves taken in order from `leaves` starting at `pos`.
  template <typename U>
  Tree<U> unflatten(const std::vector<U>& leaves) const {
    size_t pos = 0;
    Tree<U> t = unflatten_from<U>(leaves, pos);
    if (pos != leaves.size())
      throw ValidationError("Tree::unflatten: " + std::to_string(leaves.size()) + " leaves for a structure of " +
                            std::to_string(pos));
    return t;
  }
  template <typename U>
  Tree<U> unflatten_from(const std::vector<U>& leaves, size_t& pos) const {
    if (kind_ == TreeKind::Leaf) {
      if (pos >= leaves.size()) throw ValidationError("Tree::unflatten: too few leaves");
      return Tree<U>(leaves[pos++]);
    }
    std::vector<Tree<U>> cs;
    for (const auto& c : children_) cs.push_back(c.template unflatten_from<U>(leaves, pos));
    return Tree<U>::from_parts(kind_, std::move(cs), keys_);
  }

  // The path of the first node where `other` differs in structure from this tree, e.g.
  // "[1]['x']"; nullopt when the structures agree. `why` receives what differs.
  template <typename U>
  std::optional<std::string> first_mismatch(const Tree<U>& other, std::string* why = nullptr) const {
    return mismatch_at(other, "", why);
  }

  // "(*, {'b': *, 'w': *}, None)" with * for leaves.
  std::string structure_string() const {
    switch (kind_) {
      case TreeKind::None: return "None";
      case TreeKind::Leaf: return "*";
      case TreeKind::Tuple:
      case TreeKind::List: {
        std::string s = kind_ == TreeKind::Tuple ? "(" : "[";
        for (size_t i = 0; i < children_.size(); ++i) s += (i ? ", " : "") + children_[i].structure_string();
        if (kind_ == TreeKind::Tuple && children_.size() == 1) s += ",";
        return s + (kind_ == TreeKind::Tuple ? ")" : "]");
      }
      case TreeKind::Dict: {
        std::string s = "{";
        for (size_t i = 0; i < children_.size(); ++i)
          s += (i ? ", '" : "'") + keys_[i] + "': " + children_[i].structure_string();
        return s + "}";
      }
    }
    return "?";
  }

  static Tree from_parts(TreeKind k, std::vector<Tree> cs, std::vector<std::string> keys) {
    if (k == TreeKind::None) return Tree();
    return Tree(k, std::move(cs), std::move(keys));
  }

  static const char* kind_name(TreeKind k) {
    switch (k) {
      case TreeKind::None: return "None";
      case TreeKind::Leaf: return "leaf";
      case TreeKind::Tuple: return "tuple";
      case TreeKind::List: return "list";
      case TreeKind::Dict: return "dict";
    }
    return "?";
  }

  template <typename U>
  friend class Tree;

 private:
  Tree(TreeKind k, std::vector<Tree> cs, std::vector<std::string> keys)
      : kind_(k), children_(std::move(cs)), keys_(std::move(keys)) {
    int d = 0;
    for (const auto& c : children_) d = std::max(d, c.depth_);
    if (d >= kMaxNestingDepth)
      throw ValidationError("Tree: containers nested more than " + std::to_string(kMaxNestingDepth) + " deep");
    depth_ = d + 1;
  }

  template <typename U>
  std::optional<std::string> mismatch_at(const Tree<U>& o, const std::string& path, std::string* why) const {
    auto fail = [&](const std::string& w) -> std::optional<std::string> {
      if (why) *why = w;
      return path.empty() ? std::string("<root>") : path;
    };
    if (kind_ != o.kind_) return fail(std::string("expected a ") + kind_name(kind_) + ", got a " + kind_name(o.kind_));
    if (children_.size() != o.children_.size())
      return fail("expected " + std::to_string(children_.size()) + " children, got " +
                  std::to_string(o.children_.size()));
    if (keys_ != o.keys_) {
      for (size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i] != o.keys_[i]) return fail("expected key '" + keys_[i] + "', got key '" + o.keys_[i] + "'");
    }
    for (size_t i = 0; i < children_.size(); ++i) {
      std::string p = path + (kind_ == TreeKind::Dict ? "['" + keys_[i] + "']" : "[" + std::to_string(i) + "]");
      if (auto m = children_[i].mismatch_at(o.children_[i], p, why)) return m;
    }
    return std::nullopt;
  }

  TreeKind kind_ = TreeKind::None;
  std::optional<T> leaf_;
  std::vector<Tree> children_;
  std::vector<std::string> keys_;
  int depth_ = 0;
};

// The structure of a tree without its leaves.
struct LeafMark {};
using TreeDef = Tree<LeafMark>;
template <typename T>
TreeDef tree_structure(const Tree<T>& t) {
  return t.map([](const T&) { return LeafMark{}; });
}

}  // namespace evoxc
