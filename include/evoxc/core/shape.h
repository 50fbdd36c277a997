// Shape (a list of DimExpr extents) and TensorSpec (shape + dtype + optional device).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "evoxc/core/device.h"
#include "evoxc/core/dim.h"
#include "evoxc/core/dtype.h"

namespace evoxc {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<DimExpr> dims) : dims_(dims) {}
  explicit Shape(std::vector<DimExpr> dims) : dims_(std::move(dims)) {}
  static Shape from_ints(const std::vector<int64_t>& dims);

  size_t rank() const { return dims_.size(); }
  const DimExpr& operator[](size_t i) const { return dims_[i]; }
  DimExpr& operator[](size_t i) { return dims_[i]; }
  const std::vector<DimExpr>& dims() const { return dims_; }
  std::vector<DimExpr>& dims() { return dims_; }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }

  bool is_static() const;
  // The concrete extents; ShapeError when some dim is symbolic.
  std::vector<int64_t> to_ints() const;
  // The product of the extents (symbolic when some dim is).
  DimExpr num_elements() const;
  std::vector<int64_t> evaluate(const DimBindings& b) const;
  // "4x8", "Bx4", "" for rank 0 — the dims part of a printed tensor type.
  std::string to_string() const;

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  std::vector<DimExpr> dims_;
};

// Describes a future runtime tensor; the only trace input besides static values.
struct TensorSpec {
  Shape shape;
  DType dtype = kDefaultFloat;
  std::optional<Device> device;

  TensorSpec() = default;
  // ShapeError for a negative constant extent (a spec describes a tensor that can exist).
  TensorSpec(Shape s, DType t, std::optional<Device> d = std::nullopt) : shape(std::move(s)), dtype(t), device(d) {
    check_extents();
  }
  // "tensor<4x8xf32>", the printed IR type.
  std::string to_string() const;
  friend bool operator==(const TensorSpec& a, const TensorSpec& b) {
    return a.shape == b.shape && a.dtype == b.dtype && a.device == b.device;
  }

 private:
  void check_extents() const;
};

// The printed IR type of a shape and dtype: tensor<4x8xf32>, tensor<f32> for rank 0.
std::string tensor_type_string(const Shape& s, DType t);

// The numpy broadcast of two shapes over DimExprs. Equal extents stay, 1 yields to the
// other; two different symbolic extents are a ShapeError because the graph cannot prove
// them equal. `what` names the op in the message.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what);

// Normalises a possibly negative axis against rank; ShapeError naming `what` when out of range.
int64_t normalize_axis(int64_t axis, size_t rank, const std::string& what);

}  // namespace evoxc
