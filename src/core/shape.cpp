// Shape, TensorSpec and broadcasting over symbolic extents.
#include "evoxc/core/shape.h"

#include "evoxc/core/error.h"

namespace evoxc {

Shape Shape::from_ints(const std::vector<int64_t>& dims) {
  Shape s;
  s.dims_.reserve(dims.size());
  for (int64_t d : dims) s.dims_.emplace_back(d);
  return s;
}

bool Shape::is_static() const {
  for (const auto& d : dims_)
    if (!d.is_const()) return false;
  return true;
}

std::vector<int64_t> Shape::to_ints() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const auto& d : dims_) {
    if (!d.is_const()) throw ShapeError("shape " + to_string() + " has a symbolic dim where a static one is needed");
    out.push_back(d.value());
  }
  return out;
}

DimExpr Shape::num_elements() const {
  DimExpr n(1);
  for (const auto& d : dims_) n = n * d;
  return n;
}

std::vector<int64_t> Shape::evaluate(const DimBindings& b) const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const auto& d : dims_) out.push_back(d.evaluate(b));
  return out;
}

std::string Shape::to_string() const {
  std::string s;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += "x";
    s += dims_[i].to_string();
  }
  return s;
}

std::string tensor_type_string(const Shape& s, DType t) {
  std::string r = "tensor<";
  if (s.rank() > 0) r += s.to_string() + "x";
  r += dtype_short_name(t);
  return r + ">";
}

std::string TensorSpec::to_string() const { return tensor_type_string(shape, dtype); }

void TensorSpec::check_extents() const {
  for (size_t i = 0; i < shape.rank(); ++i)
    if (shape[i].is_const() && shape[i].value() < 0)
      throw ShapeError("TensorSpec: extent " + std::to_string(shape[i].value()) + " of axis " + std::to_string(i) +
                       " is negative");
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what) {
  size_t r = std::max(a.rank(), b.rank());
  std::vector<DimExpr> out(r);
  for (size_t i = 0; i < r; ++i) {
    bool has_a = i + a.rank() >= r;
    bool has_b = i + b.rank() >= r;
    const DimExpr one(1);
    const DimExpr& da = has_a ? a[i + a.rank() - r] : one;
    const DimExpr& db = has_b ? b[i + b.rank() - r] : one;
    if (da == db || (db.is_const() && db.value() == 1)) {
      out[i] = da;
    } else if (da.is_const() && da.value() == 1) {
      out[i] = db;
    } else {
      throw ShapeError(what + ": cannot broadcast shapes (" + a.to_string() + ") and (" + b.to_string() +
                       "): extents " + da.to_string() + " and " + db.to_string() + " differ at axis " +
                       std::to_string(i) + " of the result");
    }
  }
  return Shape(std::move(out));
}

int64_t normalize_axis(int64_t axis, size_t rank, const std::string& what) {
  auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw ShapeError(what + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

}  // namespace evoxc
