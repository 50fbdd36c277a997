// OpDefs of the sparse primitives (include/evoxc/ops/sparse.h): sparse_validate checks a sparse value's structure
// at run time and passes its components on; sparse_csr_matmul multiplies a CSR matrix (or, transposed, a CSC one)
// with a dense one. Every other sparse operation is written with dense ops (evoxc/trace/sparse.h).
#include "evoxc/ops/sparse.h"

#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

constexpr const char* kValidate = "sparse_validate";
constexpr const char* kMatmul = "sparse_csr_matmul";

void require_int(const char* op, const TensorType& t, const char* what) {
  if (!is_int(t.dtype))
    throw TypeError(op_label(op) + ": " + what + " has dtype " + std::string(dtype_name(t.dtype)) +
                    ", expected an integer dtype");
}

void require_extent(const char* op, const DimExpr& got, const DimExpr& want, const std::string& what) {
  if (got != want)
    throw ShapeError(op_label(op) + ": " + what + " is " + got.to_string() + ", expected " + want.to_string());
}

// The batch axes of a component: its leading axes before the `inner` ones.
std::vector<DimExpr> batch_of(const char* op, const TensorType& t, size_t inner, const char* what) {
  if (t.rank() < inner)
    throw ShapeError(op_label(op) + ": " + what + " " + t.to_string() + " needs at least " + std::to_string(inner) +
                     " axes");
  return std::vector<DimExpr>(t.shape.begin(), t.shape.end() - static_cast<std::ptrdiff_t>(inner));
}

SparseFormat format_attr(const AttrMap& attrs, const char* op) {
  const std::string& f = attr_string(attrs, "format", op);
  auto p = parse_sparse_format(f);
  if (!p) throw TypeError(op_label(op) + ": format must be \"coo\", \"csr\" or \"csc\", got \"" + f + "\"");
  return *p;
}

std::vector<TensorType> infer_validate(std::span<const TensorType> ops, const AttrMap& attrs) {
  const SparseFormat f = format_attr(attrs, kValidate);
  const Shape& shape = attr_shape(attrs, "shape", kValidate);
  check_shape_attr(kValidate, "shape", shape);
  const size_t want = f == SparseFormat::Coo ? 2 : 3;
  if (ops.size() != want)
    throw TypeError(op_label(kValidate) + " takes " + std::to_string(want) + " operands for format " +
                    sparse_format_name(f) + ", got " + std::to_string(ops.size()));
  if (f == SparseFormat::Coo) {
    require_int(kValidate, ops[0], "indices");
    auto batch = batch_of(kValidate, ops[0], 2, "indices");
    auto vbatch = batch_of(kValidate, ops[1], 1, "values");
    if (vbatch != batch)
      throw ShapeError(op_label(kValidate) + ": the batch axes of indices " + ops[0].to_string() + " and values " +
                       ops[1].to_string() + " differ");
    require_extent(kValidate, ops[1].shape[ops[1].rank() - 1], ops[0].shape[ops[0].rank() - 2], "the number of values");
    require_extent(kValidate, ops[0].shape[ops[0].rank() - 1], DimExpr(static_cast<int64_t>(shape.rank())),
                   "the index length (last axis of indices)");
  } else {
    if (shape.rank() != 2)
      throw ShapeError(op_label(kValidate) + ": a " + sparse_format_name(f) + " value is 2-D, its shape is " +
                       shape.to_string());
    require_int(kValidate, ops[0], "indptr");
    require_int(kValidate, ops[1], "indices");
    auto batch = batch_of(kValidate, ops[0], 1, "indptr");
    if (batch_of(kValidate, ops[1], 1, "indices") != batch || batch_of(kValidate, ops[2], 1, "values") != batch)
      throw ShapeError(op_label(kValidate) + ": indptr, indices and values must have the same batch axes");
    const DimExpr& major = shape[f == SparseFormat::Csr ? 0 : 1];
    require_extent(kValidate, ops[0].shape[ops[0].rank() - 1], major + 1, "indptr's length");
    require_extent(kValidate, ops[2].shape[ops[2].rank() - 1], ops[1].shape[ops[1].rank() - 1], "the number of values");
  }
  return std::vector<TensorType>(ops.begin(), ops.end());
}

std::vector<TensorType> infer_matmul(std::span<const TensorType> ops, const AttrMap& attrs) {
  const Shape& shape = attr_shape(attrs, "shape", kMatmul);
  if (shape.rank() != 2) throw ShapeError(op_label(kMatmul) + ": shape must be 2-D, got " + shape.to_string());
  const bool t = attrs.count("transpose") != 0 && attr_bool(attrs, "transpose", kMatmul);
  require_int(kMatmul, ops[0], "indptr");
  require_int(kMatmul, ops[1], "indices");
  for (size_t i = 0; i < 3; ++i)
    if (ops[i].rank() != 1)
      throw ShapeError(op_label(kMatmul) + ": operand " + std::to_string(i) + " must be 1-D, got " +
                       ops[i].to_string());
  if (ops[2].dtype != ops[3].dtype)
    throw TypeError(op_label(kMatmul) + ": values are " + std::string(dtype_name(ops[2].dtype)) + ", the dense " +
                    "operand is " + std::string(dtype_name(ops[3].dtype)));
  if (ops[3].rank() != 1 && ops[3].rank() != 2)
    throw ShapeError(op_label(kMatmul) + ": the dense operand must be 1-D or 2-D, got " + ops[3].to_string());
  require_extent(kMatmul, ops[0].shape[0], shape[0] + 1, "indptr's length");
  require_extent(kMatmul, ops[2].shape[0], ops[1].shape[0], "the number of values");
  const DimExpr& inner = shape[t ? 0 : 1];
  require_extent(kMatmul, ops[3].shape[0], inner, "the dense operand's leading extent");
  std::vector<DimExpr> out{shape[t ? 1 : 0]};
  if (ops[3].rank() == 2) out.push_back(ops[3].shape[1]);
  return {TensorType(ops[3].dtype, Shape(std::move(out)))};
}

}  // namespace

void register_sparse_ops(OpTable& t) {
  {
    OpDef d;
    d.name = kValidate;
    d.category = OpCategory::Sparse;
    d.min_operands = 2;
    d.max_operands = 3;
    d.operand_dtypes = DTypeClass::Any;
    d.attrs = {{"format", AttrKind::String}, {"shape", AttrKind::Shape}};
    d.infer = infer_validate;
    // Its results are its operands: linear in the values (operand 1 of a COO value, 2 of a CSR/CSC one; the
    // integer operands carry no tangents).
    set_linear(d, {1, 2});
    d.doc =
        "its operands unchanged, once the structure of the sparse value they make (format coo: indices, values; "
        "csr/csc: indptr, indices, values; leading axes a batch) has been checked at run time: a ValidationError "
        "names the first out-of-range index, bad indptr entry or unsorted row";
    d.sample = [](DType dt) {
      return OpSample{{TensorType(DType::I64, Shape{3, 2}), TensorType(dt, Shape{3})},
                      {{"format", std::string("coo")}, {"shape", Shape{4, 5}}}};
    };
    t.add(std::move(d));
  }
  {
    OpDef d;
    d.name = kMatmul;
    d.category = OpCategory::Sparse;
    d.min_operands = 4;
    d.max_operands = 4;
    d.operand_dtypes = DTypeClass::Numeric;
    d.attrs = {{"shape", AttrKind::Shape}, {"transpose", AttrKind::Bool, false}};
    d.infer = infer_matmul;
    // Bilinear in the values and the dense operand.
    set_linear_each(d, {2, 3});
    d.doc =
        "A @ dense for the CSR matrix A = (indptr, indices, values) of `shape` (M, K); with transpose, A^T @ dense "
        "(the same arrays read as the CSC matrix A^T). dense is (K,) or (K, N) of the values' dtype; entries "
        "outside indptr[0] .. indptr[M] - 1 are ignored; an index out of range or a decreasing indptr is a "
        "ValidationError at run time";
    d.sample = [](DType dt) {
      return OpSample{{TensorType(DType::I64, Shape{4}), TensorType(DType::I64, Shape{5}), TensorType(dt, Shape{5}),
                       TensorType(dt, Shape{4, 2})},
                      {{"shape", Shape{3, 4}}}};
    };
    t.add(std::move(d));
  }
}

}  // namespace evoxc::ops_detail
