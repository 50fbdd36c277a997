// StableHLO lowering rules: control flow (cond -> if/case, while_loop -> while, scan -> a counted while).
#include "backends/stablehlo/emitter.h"

namespace evoxc::stablehlo {

namespace {

std::vector<TensorType> result_types(const Operation& op) {
  std::vector<TensorType> ts;
  for (const auto& r : op.results()) ts.push_back(r->type());
  return ts;
}

// StableHLO's if/case regions take no arguments and read enclosing values directly, so the
// EvoXIR region's block arguments are bound to the operands themselves.
std::vector<Val> cond_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  std::vector<Val> args(in.begin() + 1, in.end());
  std::vector<TensorType> results = result_types(op);
  auto body = [&](size_t r) {
    e.region_block({}, [&](std::span<const Val>) { return e.lower_block(op.region(r).block(), args); });
  };
  const Val& pred = in[0];
  if (pred.type.dtype == DType::Bool)
    return e.op_with_regions("if", {&pred, 1}, "", results, op.regions().size(), body);
  // An index: evoxc clamps it into [0, N-1] (StableHLO's case sends every out-of-range index to
  // the last branch, a negative one included), then case takes an i32.
  auto n = static_cast<int64_t>(op.regions().size());
  TensorType i32 = scalar_type(DType::I32);
  Val idx = pred;
  if (pred.type.dtype == DType::I64) {
    // Clamp in int64 first: a huge int64 index must not wrap when narrowed.
    Val lo = e.splat(Attribute(int64_t{0}), DType::I64, Shape{}), hi = e.splat(Attribute(n - 1), DType::I64, Shape{});
    idx = e.op1("clamp", {lo, idx, hi}, "", pred.type);
  }
  idx = e.convert(idx, DType::I32);
  Val lo = e.splat(Attribute(int64_t{0}), DType::I32, Shape{}), hi = e.splat(Attribute(n - 1), DType::I32, Shape{});
  idx = e.op1("clamp", {lo, idx, hi}, "", i32);
  return e.op_with_regions("case", {&idx, 1}, "", results, op.regions().size(), body);
}

std::vector<Val> while_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  std::vector<TensorType> carry = result_types(op);
  return e.op_with_regions("while", in, "", carry, 2, [&](size_t r) {
    e.region_block(carry, [&](std::span<const Val> args) { return e.lower_block(op.region(r).block(), args); });
  });
}

// scan: a while over (t, carry..., ys...) with t from 0 to length; step t reads row t (length-1-t
// when reversed) of every xs with dynamic_slice and writes each y to the same row with
// dynamic_update_slice, so the results are exactly the interpreter's.
std::vector<Val> scan_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  auto num_carry = static_cast<size_t>(attr_int(op.attributes(), "num_carry", "scan"));
  bool reverse = op.attributes().count("reverse") && attr_bool(op.attributes(), "reverse", "scan");
  std::vector<TensorType> results = result_types(op);
  size_t num_ys = results.size() - num_carry;
  DimExpr length_dim = num_ys > 0 ? results[num_carry].shape[0] : DimExpr(0);
  if (op.attributes().count("length")) {
    length_dim = DimExpr(attr_int(op.attributes(), "length", "scan"));
  } else if (in.size() > num_carry) {
    length_dim = in[num_carry].type.shape[0];
  }
  TensorType i64 = scalar_type(DType::I64);
  Val length = e.extent(length_dim);
  // A one-row slice or update of a tensor whose leading extent may be 0 is ill-typed once the
  // extent is known, even in a loop that never runs: when the length is not a known positive
  // constant, xs get one padding row and ys one spare row, sliced off after the loop.
  bool spare = !length_dim.is_const() || length_dim.value() == 0;
  auto with_row = [&](const TensorType& t) {
    Shape s = t.shape;
    s.dims()[0] = s.dims()[0] + DimExpr(1);
    return TensorType(t.dtype, s);
  };
  std::vector<Val> init{e.splat(Attribute(int64_t{0}), DType::I64, Shape{})};
  init.insert(init.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(num_carry));
  for (size_t j = 0; j < num_ys; ++j) {
    const TensorType& y = results[num_carry + j];
    init.push_back(e.splat(Attribute(int64_t{0}), y.dtype, spare ? with_row(y).shape : y.shape));
  }
  std::vector<TensorType> state;
  for (const Val& v : init) state.push_back(v.type);
  std::vector<Val> xs(in.begin() + static_cast<std::ptrdiff_t>(num_carry), in.end());
  if (spare) {
    for (Val& x : xs) {
      std::vector<int64_t> lo(x.type.shape.rank(), 0), hi(x.type.shape.rank(), 0);
      hi[0] = 1;
      Val zero = e.splat(Attribute(int64_t{0}), x.type.dtype, Shape{});
      x = e.op1("pad", {x, zero},
                "{edge_padding_low = " + i64_array(lo) + ", edge_padding_high = " + i64_array(hi) +
                    ", interior_padding = " + i64_array(lo) + "}",
                with_row(x.type));
    }
  }
  TensorType pred(DType::Bool, Shape{});
  std::vector<Val> out = e.op_with_regions("while", init, "", state, 2, [&](size_t r) {
    e.region_block(state, [&](std::span<const Val> s) -> std::vector<Val> {
      if (r == 0) {
        return {e.op1("compare", {s[0], length},
                      "{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = "
                      "#stablehlo<comparison_type SIGNED>}",
                      pred)};
      }
      Val row = s[0];
      if (reverse) {
        Val last = e.op1("subtract", {length, e.splat(Attribute(int64_t{1}), DType::I64, Shape{})}, "", i64);
        row = e.op1("subtract", {last, s[0]}, "", i64);
      }
      Val zero = e.splat(Attribute(int64_t{0}), DType::I64, Shape{});
      std::vector<Val> args(s.begin() + 1, s.begin() + 1 + static_cast<std::ptrdiff_t>(num_carry));
      for (const Val& x : xs) {
        std::vector<Val> starts{row};
        std::vector<int64_t> sizes{1};
        Shape slice_shape{1}, item;
        for (size_t a = 1; a < x.type.shape.rank(); ++a) {
          starts.push_back(zero);
          const DimExpr& d = x.type.shape[a];
          if (!d.is_const()) Emitter::fail(op, "xs with a symbolic inner extent (dynamic_slice needs static sizes)");
          sizes.push_back(d.value());
          slice_shape.dims().push_back(d);
          item.dims().push_back(d);
        }
        std::vector<Val> operands{x};
        operands.insert(operands.end(), starts.begin(), starts.end());
        Val slice = e.op1("dynamic_slice", operands, "{slice_sizes = " + i64_array(sizes) + "}",
                          TensorType(x.type.dtype, slice_shape));
        args.push_back(e.op1("reshape", {slice}, "", TensorType(x.type.dtype, item)));
      }
      std::vector<Val> body = e.lower_block(op.region(0).block(), args);
      std::vector<Val> next{e.op1("add", {s[0], e.splat(Attribute(int64_t{1}), DType::I64, Shape{})}, "", i64)};
      next.insert(next.end(), body.begin(), body.begin() + static_cast<std::ptrdiff_t>(num_carry));
      for (size_t j = 0; j < num_ys; ++j) {
        const Val& y = body[num_carry + j];
        const Val& ys = s[1 + num_carry + j];
        Shape one{1};
        for (const DimExpr& d : y.type.shape) one.dims().push_back(d);
        // (a symbolic extent, a batch vmap put inside the body: StableHLO's reshape takes static shapes only)
        TensorType yt(y.type.dtype, one);
        Val y1 = one.is_static() ? e.op1("reshape", {y}, "", yt)
                                 : e.op1("dynamic_reshape", {y, e.shape_tensor(one)}, "", yt);
        std::vector<Val> operands{ys, y1, row};
        for (size_t a = 0; a < y.type.shape.rank(); ++a) operands.push_back(zero);
        next.push_back(e.op1("dynamic_update_slice", operands, "", ys.type));
      }
      return next;
    });
  });
  std::vector<Val> finals(out.begin() + 1, out.end());
  if (spare) {
    // Drop each y's spare row: [0, length) of the leading axis.
    for (size_t j = 0; j < num_ys; ++j) {
      Val& y = finals[num_carry + j];
      const TensorType& want = results[num_carry + j];
      Shape start_shape{static_cast<int64_t>(want.shape.rank())};
      std::vector<int64_t> zeros(want.shape.rank(), 0), ones(want.shape.rank(), 1);
      Tensor z = Tensor::from_vector(zeros, {static_cast<int64_t>(zeros.size())});
      Tensor o = Tensor::from_vector(ones, {static_cast<int64_t>(ones.size())});
      y = e.op1("real_dynamic_slice", {y, e.constant(z), e.shape_tensor(want.shape), e.constant(o)}, "", want);
    }
  }
  return finals;
}

}  // namespace

void add_control_rules(Table& t) {
  t.set("cond", cond_rule);
  t.set("while_loop", while_rule);
  t.set("scan", scan_rule);
}

}  // namespace evoxc::stablehlo
