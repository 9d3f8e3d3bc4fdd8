//===- ShapeAnalysis.cpp - symbolic dims and small int64 values -----------===//

#include "dialects/graph/Transforms/ShapeAnalysis.h"

#include "dialects/graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace infer::graph;

//===----------------------------------------------------------------------===//
// SymPoly
//===----------------------------------------------------------------------===//

SymPoly SymPoly::constant(int64_t c) {
  SymPoly p;
  if (c != 0)
    p.terms[{}] = c;
  return p;
}

SymPoly SymPoly::symbol(unsigned id) {
  SymPoly p;
  p.terms[{id}] = 1;
  return p;
}

bool SymPoly::isConstant() const {
  return terms.empty() || (terms.size() == 1 && terms.begin()->first.empty());
}

std::optional<int64_t> SymPoly::getConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms.begin()->first.empty())
    return terms.begin()->second;
  return std::nullopt;
}

std::optional<SymPoly> SymPoly::add(const SymPoly &a, const SymPoly &b) {
  SymPoly r = a;
  for (const auto &[mono, coeff] : b.terms) {
    int64_t &slot = r.terms[mono];
    if (__builtin_add_overflow(slot, coeff, &slot))
      return std::nullopt;
    if (slot == 0)
      r.terms.erase(mono);
  }
  return r;
}

std::optional<SymPoly> SymPoly::sub(const SymPoly &a, const SymPoly &b) {
  SymPoly negB;
  for (const auto &[mono, coeff] : b.terms) {
    if (coeff == std::numeric_limits<int64_t>::min())
      return std::nullopt;
    negB.terms[mono] = -coeff;
  }
  return add(a, negB);
}

std::optional<SymPoly> SymPoly::mul(const SymPoly &a, const SymPoly &b) {
  SymPoly r;
  for (const auto &[ma, ca] : a.terms) {
    for (const auto &[mb, cb] : b.terms) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      llvm::sort(m);
      int64_t c;
      if (__builtin_mul_overflow(ca, cb, &c))
        return std::nullopt;
      int64_t &slot = r.terms[m];
      if (__builtin_add_overflow(slot, c, &slot))
        return std::nullopt;
      if (slot == 0)
        r.terms.erase(m);
    }
  }
  return r;
}

std::optional<SymPoly> SymPoly::divExact(const SymPoly &a, const SymPoly &b) {
  if (b.terms.size() != 1)
    return std::nullopt;
  const auto &[bm, bc] = *b.terms.begin();
  SymPoly r;
  for (const auto &[am, ac] : a.terms) {
    if (ac % bc != 0)
      return std::nullopt;
    // Remove bm from am (both sorted multisets).
    Monomial rest;
    size_t j = 0;
    for (unsigned s : am) {
      if (j < bm.size() && bm[j] == s)
        ++j;
      else
        rest.push_back(s);
    }
    if (j != bm.size())
      return std::nullopt;
    r.terms[rest] = ac / bc;
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

using Polys = SmallVector<SymPoly>;
using Partial = SmallVector<std::optional<SymPoly>>;

/// Indices this large stand for "to the end of the dim" in Slice: no tensor
/// has 2^62 elements along one dim.
constexpr int64_t kHugeIndex = int64_t(1) << 62;

std::optional<SymPoly> addP(const std::optional<SymPoly> &a, const std::optional<SymPoly> &b) {
  if (!a || !b)
    return std::nullopt;
  return SymPoly::add(*a, *b);
}

std::optional<SymPoly> mulP(const std::optional<SymPoly> &a, const std::optional<SymPoly> &b) {
  if (!a || !b)
    return std::nullopt;
  return SymPoly::mul(*a, *b);
}

std::optional<SymPoly> product(ArrayRef<SymPoly> factors) {
  std::optional<SymPoly> r = SymPoly::constant(1);
  for (const SymPoly &f : factors)
    r = mulP(r, f);
  return r;
}

/// The size a broadcast of two dims gives, when the rule proves it.
std::optional<SymPoly> broadcastDim(const SymPoly &a, const SymPoly &b) {
  if (a == b)
    return a;
  std::optional<int64_t> ca = a.getConstant(), cb = b.getConstant();
  if (ca == 1)
    return b;
  if (cb == 1)
    return a;
  // A valid broadcast of a constant other than 1 with x needs x in {1, c}.
  if (ca)
    return a;
  if (cb)
    return b;
  return std::nullopt;
}

Partial broadcastDims(ArrayRef<Polys> shapes, int64_t rank) {
  Partial result(rank);
  for (int64_t i = 0; i < rank; ++i) {
    std::optional<SymPoly> acc;
    bool known = true;
    for (const Polys &shape : shapes) {
      int64_t k = i - (rank - static_cast<int64_t>(shape.size()));
      if (k < 0)
        continue;
      if (!acc) {
        acc = shape[k];
        continue;
      }
      acc = broadcastDim(*acc, shape[k]);
      if (!acc) {
        known = false;
        break;
      }
    }
    if (known)
      result[i] = acc;
  }
  return result;
}

std::optional<SmallVector<int64_t>> allConstant(ArrayRef<SymPoly> polys) {
  SmallVector<int64_t> out;
  for (const SymPoly &p : polys) {
    std::optional<int64_t> c = p.getConstant();
    if (!c)
      return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::optional<SmallVector<int64_t>> staticShape(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape())
    return std::nullopt;
  return SmallVector<int64_t>(ranked.getShape());
}

/// Flat index into an operand of shape `operand` that numpy broadcasting
/// reads for flat index `flat` of the result of shape `result`.
int64_t broadcastIndex(ArrayRef<int64_t> result, ArrayRef<int64_t> operand, int64_t flat) {
  int64_t index = 0, stride = 1;
  int64_t offset = result.size() - operand.size();
  for (int64_t i = result.size() - 1; i >= 0; --i) {
    int64_t coord = flat % result[i];
    flat /= result[i];
    int64_t k = i - offset;
    if (k < 0)
      continue;
    if (operand[k] != 1)
      index += coord * stride;
    stride *= operand[k];
  }
  return index;
}


/// ONNX Slice's clamped start/end for a constant dim.
int64_t clampIndex(int64_t x, int64_t d, bool isStart, int64_t step) {
  if (x < 0)
    x += d;
  if (step > 0)
    return std::clamp<int64_t>(x, 0, d);
  return isStart ? std::clamp<int64_t>(x, 0, d - 1) : std::clamp<int64_t>(x, -1, d - 1);
}

} // namespace

//===----------------------------------------------------------------------===//
// ShapeAnalysis
//===----------------------------------------------------------------------===//

ShapeAnalysis::ShapeAnalysis(func::FuncOp func, bool assumeNonEmpty)
    : assumeNonEmpty(assumeNonEmpty) {
  // Analyse in program order so that no query recurses deeply.
  for (BlockArgument arg : func.getArguments())
    lookup(arg);
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      lookup(result);
  });
}

bool ShapeAnalysis::isNonNegative(const SymPoly &p) const {
  for (const auto &[mono, coeff] : p.getTerms()) {
    if (coeff < 0)
      return false;
    for (unsigned s : mono)
      if (!symbolIsDim[s])
        return false;
  }
  return true;
}

bool ShapeAnalysis::isPositive(const SymPoly &p) const {
  if (!isNonNegative(p))
    return false;
  for (const auto &[mono, coeff] : p.getTerms()) {
    if (mono.empty() && coeff > 0)
      return true;
    if (assumeNonEmpty && coeff > 0)
      return true;
  }
  return false;
}

unsigned ShapeAnalysis::freshSymbol(Value value, unsigned index, bool isDim) {
  auto key = std::make_tuple(value.getAsOpaquePointer(), index, isDim);
  auto it = symbolOf.find(key);
  if (it != symbolOf.end())
    return it->second;
  unsigned id = symbolIsDim.size();
  symbolIsDim.push_back(isDim);
  symbolOf[key] = id;
  return id;
}

void ShapeAnalysis::forget(Operation *op) {
  for (Value result : op->getResults()) {
    infos.erase(result);
    void *ptr = result.getAsOpaquePointer();
    auto it = symbolOf.lower_bound(std::make_tuple(ptr, 0u, false));
    while (it != symbolOf.end() && std::get<0>(it->first) == ptr)
      it = symbolOf.erase(it);
  }
}

std::optional<Polys> ShapeAnalysis::getDims(Value value) { return lookup(value).dims; }

std::optional<Polys> ShapeAnalysis::getElements(Value value) { return lookup(value).elements; }

const ShapeAnalysis::Info &ShapeAnalysis::lookup(Value value) {
  auto it = infos.find(value);
  if (it != infos.end())
    return it->second;
  Info info = compute(value);
  return infos[value] = std::move(info);
}

ShapeAnalysis::Info ShapeAnalysis::compute(Value value) {
  Info info;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return info;

  std::optional<Partial> dims = computeDims(value);
  Polys resolved;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (!type.isDynamicDim(i))
      resolved.push_back(SymPoly::constant(type.getDimSize(i)));
    else if (dims && static_cast<int64_t>(dims->size()) == e && (*dims)[i])
      resolved.push_back(*(*dims)[i]);
    else
      resolved.push_back(SymPoly::symbol(freshSymbol(value, i, /*isDim=*/true)));
  }
  info.dims = resolved;

  Type element = type.getElementType();
  if (!type.hasStaticShape() || !element.isSignlessInteger() ||
      type.getNumElements() > kMaxElements)
    return info;
  // Commit the dims first: element rules of this value never read them, but
  // keep the map consistent for recursive queries.
  infos[value] = info;
  std::optional<Partial> elements = computeElements(value);
  unsigned width = element.getIntOrFloatBitWidth();
  Polys values;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    std::optional<SymPoly> v;
    if (elements && static_cast<int64_t>(elements->size()) == e)
      v = (*elements)[i];
    // Narrow types keep only constants that fit (arithmetic would wrap).
    if (v && width != 64) {
      std::optional<int64_t> c = v->getConstant();
      bool fits = c && (width == 1 ? (*c == 0 || *c == 1)
                                   : (*c >= -(int64_t(1) << (width - 1)) &&
                                      *c < (int64_t(1) << (width - 1))));
      if (!fits)
        v.reset();
    }
    values.push_back(v ? *v : SymPoly::symbol(freshSymbol(value, i, /*isDim=*/false)));
  }
  info.elements = values;
  return info;
}

//===----------------------------------------------------------------------===//
// Dim rules
//===----------------------------------------------------------------------===//

std::optional<Partial> ShapeAnalysis::computeDims(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  auto resultType = cast<RankedTensorType>(value.getType());
  int64_t rank = resultType.getRank();
  auto dimsOf = [&](Value v) -> std::optional<Polys> { return getDims(v); };
  auto elementsOf = [&](Value v) -> std::optional<Polys> { return getElements(v); };
  auto toPartial = [](const Polys &p) {
    Partial r;
    for (const SymPoly &x : p)
      r.push_back(x);
    return r;
  };
  auto constantsOf = [&](Value v) -> std::optional<SmallVector<int64_t>> {
    std::optional<Polys> e = elementsOf(v);
    if (!e)
      return std::nullopt;
    return allConstant(*e);
  };

  // Ops whose result has the shape of their first operand.
  if (isa<NegOp, AbsOp, SqrtOp, ReciprocalOp, ExpOp, LogOp, SinOp, CosOp, TanhOp, ErfOp,
          SigmoidOp, ReluOp, IdentityOp, NotOp, IsNaNOp, GeluOp, CastOp, ClipOp, SoftmaxOp,
          CumSumOp, TriluOp, LayerNormOp, RmsNormOp>(op)) {
    std::optional<Polys> in = dimsOf(op->getOperand(0));
    if (!in || static_cast<int64_t>(in->size()) != rank)
      return std::nullopt;
    return toPartial(*in);
  }

  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, AndOp, OrOp, EqualOp, LessOp,
          LessOrEqualOp, GreaterOp, GreaterOrEqualOp, WhereOp>(op)) {
    SmallVector<Polys> shapes;
    for (Value operand : op->getOperands()) {
      std::optional<Polys> d = dimsOf(operand);
      if (!d)
        return std::nullopt;
      shapes.push_back(*d);
    }
    return broadcastDims(shapes, rank);
  }

  return llvm::TypeSwitch<Operation *, std::optional<Partial>>(op)
      .Case<MatMulOp>([&](MatMulOp m) -> std::optional<Partial> {
        std::optional<Polys> l = dimsOf(m.getLhs()), r = dimsOf(m.getRhs());
        if (!l || !r || l->empty() || r->empty())
          return std::nullopt;
        Partial out;
        if (l->size() == 1 && r->size() == 1)
          return out;
        if (r->size() == 1) {
          for (size_t i = 0; i + 1 < l->size(); ++i)
            out.push_back((*l)[i]);
          return out;
        }
        if (l->size() == 1) {
          for (size_t i = 0; i + 2 < r->size(); ++i)
            out.push_back((*r)[i]);
          out.push_back(r->back());
          return out;
        }
        Polys lb(l->begin(), l->end() - 2), rb(r->begin(), r->end() - 2);
        int64_t batch = std::max(lb.size(), rb.size());
        out = broadcastDims({lb, rb}, batch);
        out.push_back((*l)[l->size() - 2]);
        out.push_back(r->back());
        return out;
      })
      .Case<GemmOp>([&](GemmOp g) -> std::optional<Partial> {
        std::optional<Polys> a = dimsOf(g.getA()), b = dimsOf(g.getB());
        if (!a || !b || a->size() != 2 || b->size() != 2)
          return std::nullopt;
        return Partial{(*a)[g.getTransA() ? 1 : 0], (*b)[g.getTransB() ? 0 : 1]};
      })
      .Case<TransposeOp>([&](TransposeOp t) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(t.getInput());
        if (!in || in->size() != t.getPerm().size())
          return std::nullopt;
        Partial out;
        for (int64_t p : t.getPerm())
          out.push_back((*in)[p]);
        return out;
      })
      .Case<ReshapeOp>([&](ReshapeOp r) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(r.getData());
        std::optional<Polys> target = elementsOf(r.getShape());
        if (!in || !target || static_cast<int64_t>(target->size()) != rank)
          return std::nullopt;
        bool allowZero = r.getAllowzero();
        Partial out(rank);
        int64_t inferIndex = -1;
        for (int64_t i = 0; i < rank; ++i) {
          const SymPoly &t = (*target)[i];
          bool inRange = i < static_cast<int64_t>(in->size());
          if (std::optional<int64_t> c = t.getConstant()) {
            if (*c > 0 || (*c == 0 && allowZero))
              out[i] = t;
            else if (*c == 0 && inRange)
              out[i] = (*in)[i];
            else if (*c == -1 && inferIndex < 0)
              inferIndex = i;
            else
              return std::nullopt;
            continue;
          }
          // A symbolic entry is the output dim unless, at runtime, it could be
          // 0 meaning "copy" (harmless when the copied dim is the same value)
          // or -1 meaning "infer".
          if (allowZero ? isNonNegative(t)
                        : (isPositive(t) || (inRange && t == (*in)[i])))
            out[i] = t;
        }
        if (inferIndex >= 0) {
          // numel(input) / prod(other output dims), cancelling equal factors.
          SmallVector<SymPoly> num(in->begin(), in->end()), den;
          for (int64_t i = 0; i < rank; ++i) {
            if (i == inferIndex)
              continue;
            if (!out[i])
              return out;
            den.push_back(*out[i]);
          }
          SmallVector<SymPoly> restDen;
          for (const SymPoly &d : den) {
            auto it = llvm::find(num, d);
            if (it != num.end())
              num.erase(it);
            else
              restDen.push_back(d);
          }
          std::optional<SymPoly> n = product(num), d = product(restDen);
          if (n && d && d->getConstant() != 0)
            out[inferIndex] = SymPoly::divExact(*n, *d);
        }
        return out;
      })
      .Case<ExpandOp>([&](ExpandOp e) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(e.getInput());
        std::optional<Polys> target = elementsOf(e.getShape());
        if (!in || !target)
          return std::nullopt;
        return broadcastDims({*in, *target}, rank);
      })
      .Case<UnsqueezeOp>([&](UnsqueezeOp u) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(u.getInput());
        std::optional<SmallVector<int64_t>> axes = constantsOf(u.getAxes());
        if (!in || !axes || static_cast<int64_t>(in->size() + axes->size()) != rank)
          return std::nullopt;
        SmallVector<bool> isNew(rank, false);
        for (int64_t a : *axes) {
          if (a < 0)
            a += rank;
          if (a < 0 || a >= rank || isNew[a])
            return std::nullopt; // out of range or repeated: not a valid Unsqueeze
          isNew[a] = true;
        }
        Partial out;
        size_t next = 0;
        for (int64_t i = 0; i < rank; ++i)
          out.push_back(isNew[i] ? SymPoly::constant(1) : (*in)[next++]);
        return out;
      })
      .Case<SqueezeOp>([&](SqueezeOp s) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(s.getInput());
        if (!in)
          return std::nullopt;
        int64_t inRank = in->size();
        SmallVector<bool> drop(inRank, false);
        if (s.getAxes()) {
          std::optional<SmallVector<int64_t>> axes = constantsOf(s.getAxes());
          if (!axes)
            return std::nullopt;
          for (int64_t a : *axes) {
            if (a < 0)
              a += inRank;
            if (a < 0 || a >= inRank)
              return std::nullopt;
            drop[a] = true;
          }
        } else {
          for (int64_t i = 0; i < inRank; ++i)
            drop[i] = (*in)[i].getConstant() == 1;
        }
        Partial out;
        for (int64_t i = 0; i < inRank; ++i)
          if (!drop[i])
            out.push_back((*in)[i]);
        if (static_cast<int64_t>(out.size()) != rank)
          return std::nullopt;
        return out;
      })
      .Case<ConcatOp>([&](ConcatOp c) -> std::optional<Partial> {
        int64_t axis = c.getAxis();
        if (axis < 0 || axis >= rank)
          return std::nullopt;
        Partial out(rank);
        std::optional<SymPoly> sum = SymPoly::constant(0);
        for (Value in : c.getInputs()) {
          std::optional<Polys> d = dimsOf(in);
          if (!d || static_cast<int64_t>(d->size()) != rank)
            return std::nullopt;
          sum = addP(sum, (*d)[axis]);
          for (int64_t i = 0; i < rank; ++i) {
            if (i == axis)
              continue;
            // All inputs agree off the axis; prefer a constant.
            if (!out[i] || (!out[i]->isConstant() && (*d)[i].isConstant()))
              out[i] = (*d)[i];
          }
        }
        out[axis] = sum;
        return out;
      })
      .Case<SliceOp>([&](SliceOp s) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(s.getData());
        std::optional<Polys> starts = elementsOf(s.getStarts()), ends = elementsOf(s.getEnds());
        std::optional<SmallVector<int64_t>> axes = constantsOf(s.getAxes());
        std::optional<SmallVector<int64_t>> steps = constantsOf(s.getSteps());
        if (!in || !starts || !ends || !axes || !steps ||
            static_cast<int64_t>(in->size()) != rank || starts->size() != axes->size() ||
            ends->size() != axes->size() || steps->size() != axes->size())
          return std::nullopt;
        Partial out = toPartial(*in);
        for (size_t k = 0; k < axes->size(); ++k) {
          int64_t axis = (*axes)[k] < 0 ? (*axes)[k] + rank : (*axes)[k];
          if (axis < 0 || axis >= rank)
            return std::nullopt;
          const SymPoly &d = (*in)[axis];
          int64_t step = (*steps)[k];
          std::optional<int64_t> cd = d.getConstant(), cs = (*starts)[k].getConstant(),
                                 ce = (*ends)[k].getConstant();
          if (cd && *cd <= 0 &&
              step != 0) { // an empty axis stays empty (and clampIndex needs d >= 1)
            out[axis] = SymPoly::constant(0);
            continue;
          }
          if (cd && cs && ce && step != 0) {
            int64_t b = clampIndex(*cs, *cd, true, step);
            int64_t e = clampIndex(*ce, *cd, false, step);
            // Counted without step - 1 or -step, which overflow at a step of
            // +-2^63 (the onnx-proto fuzzer's input of 2026-12-05).
            int64_t n = 0;
            if (step > 0 && e > b)
              n = (e - b - 1) / step + 1;
            else if (step < 0 && b > e)
              n = int64_t((uint64_t(b) - uint64_t(e) - 1) / (uint64_t(0) - uint64_t(step)) + 1);
            out[axis] = SymPoly::constant(n);
            continue;
          }
          out[axis].reset();
          if (step != 1)
            continue;
          // Normalise x into [0, d] when it provably lands there.
          auto normalise = [&](const SymPoly &x) -> std::optional<SymPoly> {
            std::optional<int64_t> c = x.getConstant();
            if (c && *c >= kHugeIndex)
              return d;
            std::optional<SymPoly> y = x;
            if (c && *c < 0)
              y = SymPoly::add(d, x);
            if (!y || !isNonNegative(*y))
              return std::nullopt;
            std::optional<SymPoly> rest = SymPoly::sub(d, *y);
            if (!rest || !isNonNegative(*rest))
              return std::nullopt;
            return y;
          };
          std::optional<SymPoly> b = normalise((*starts)[k]), e = normalise((*ends)[k]);
          if (!b || !e)
            continue;
          std::optional<SymPoly> n = SymPoly::sub(*e, *b);
          if (n && isNonNegative(*n))
            out[axis] = n;
          else if (n && n->getConstant() && *n->getConstant() < 0)
            out[axis] = SymPoly::constant(0);
        }
        return out;
      })
      .Case<GatherOp>([&](GatherOp g) -> std::optional<Partial> {
        std::optional<Polys> data = dimsOf(g.getData()), idx = dimsOf(g.getIndices());
        int64_t axis = g.getAxis();
        if (!data || !idx || axis < 0 || axis >= static_cast<int64_t>(data->size()))
          return std::nullopt;
        Partial out;
        for (int64_t i = 0; i < axis; ++i)
          out.push_back((*data)[i]);
        for (const SymPoly &p : *idx)
          out.push_back(p);
        for (size_t i = axis + 1; i < data->size(); ++i)
          out.push_back((*data)[i]);
        return out;
      })
      .Case<TopKOp>([&](TopKOp t) -> std::optional<Partial> {
        std::optional<Polys> dims = dimsOf(t.getInput()), k = elementsOf(t.getK());
        if (!dims)
          return std::nullopt;
        Partial out(dims->begin(), dims->end());
        out[t.getAxis()].reset();
        if (k && k->size() == 1)
          out[t.getAxis()] = (*k)[0];
        return out;
      })
      .Case<GatherElementsOp>([&](GatherElementsOp g) -> std::optional<Partial> {
        std::optional<Polys> idx = dimsOf(g.getIndices());
        if (!idx)
          return std::nullopt;
        return Partial(idx->begin(), idx->end());
      })
      .Case<ScatterNDOp, ScatterElementsOp>([&](auto s) -> std::optional<Partial> {
        std::optional<Polys> data = dimsOf(s.getData());
        if (!data)
          return std::nullopt;
        return Partial(data->begin(), data->end());
      })
      .Case<GatherNDOp>([&](GatherNDOp g) -> std::optional<Partial> {
        // indices[:-1] ++ data[batch_dims + indices[-1]:]; the batch dims of
        // indices equal data's.
        std::optional<Polys> data = dimsOf(g.getData()), idx = dimsOf(g.getIndices());
        if (!data || !idx || idx->empty())
          return std::nullopt;
        std::optional<int64_t> depth = idx->back().getConstant();
        int64_t from = g.getBatchDims() + (depth ? *depth : 0);
        if (!depth || from > static_cast<int64_t>(data->size()))
          return std::nullopt;
        Partial out;
        for (size_t i = 0; i + 1 < idx->size(); ++i)
          out.push_back((*idx)[i]);
        for (size_t i = from; i < data->size(); ++i)
          out.push_back((*data)[i]);
        return out;
      })
      .Case<RangeOp>([&](RangeOp r) -> std::optional<Partial> {
        std::optional<Polys> start = elementsOf(r.getStart()), limit = elementsOf(r.getLimit()),
                             delta = elementsOf(r.getDelta());
        if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
            delta->size() != 1)
          return std::nullopt;
        std::optional<int64_t> cs = (*start)[0].getConstant(), cl = (*limit)[0].getConstant(),
                               cd = (*delta)[0].getConstant();
        if (cs && cl && cd && *cd != 0) {
          // In 128 bits: limits and steps at the int64 bounds overflow 64.
          const __int128 span = __int128(*cl) - *cs, d = *cd;
          const __int128 n = d > 0 ? (span + d - 1) / d : (span + d + 1) / d;
          if (n > INT64_MAX)
            return std::nullopt;
          return Partial{SymPoly::constant(n > 0 ? int64_t(n) : 0)};
        }
        std::optional<SymPoly> n;
        if (cd == 1)
          n = SymPoly::sub((*limit)[0], (*start)[0]);
        else if (cd == -1)
          n = SymPoly::sub((*start)[0], (*limit)[0]);
        if (n && isNonNegative(*n))
          return Partial{*n};
        return std::nullopt;
      })
      .Case<ConstantOfShapeOp>([&](ConstantOfShapeOp c) -> std::optional<Partial> {
        std::optional<Polys> shape = elementsOf(c.getShape());
        if (!shape || static_cast<int64_t>(shape->size()) != rank)
          return std::nullopt;
        Partial out;
        for (const SymPoly &p : *shape)
          out.push_back(isNonNegative(p) ? std::optional<SymPoly>(p) : std::nullopt);
        return out;
      })
      .Case<TileOp>([&](TileOp t) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(t.getInput()), reps = elementsOf(t.getRepeats());
        if (!in || !reps || in->size() != reps->size() ||
            static_cast<int64_t>(in->size()) != rank)
          return std::nullopt;
        Partial out;
        for (int64_t i = 0; i < rank; ++i)
          out.push_back(isNonNegative((*reps)[i]) ? SymPoly::mul((*in)[i], (*reps)[i])
                                                  : std::nullopt);
        return out;
      })
      .Case<FlattenOp>([&](FlattenOp f) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(f.getInput());
        int64_t axis = f.getAxis();
        if (!in || rank != 2 || axis < 0 || axis > static_cast<int64_t>(in->size()))
          return std::nullopt;
        return Partial{product(ArrayRef<SymPoly>(*in).take_front(axis)),
                       product(ArrayRef<SymPoly>(*in).drop_front(axis))};
      })
      .Case<ReduceMeanOp, ReduceSumOp, ReduceMaxOp>([&](auto r) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(r.getInput());
        if (!in)
          return std::nullopt;
        int64_t inRank = in->size();
        SmallVector<bool> reduced(inRank, false);
        if (r.getAxes()) {
          std::optional<SmallVector<int64_t>> axes = constantsOf(r.getAxes());
          if (!axes)
            return std::nullopt;
          if (axes->empty() && r.getNoopWithEmptyAxes())
            return toPartial(*in);
          if (axes->empty())
            reduced.assign(inRank, true);
          for (int64_t a : *axes) {
            if (a < 0)
              a += inRank;
            if (a < 0 || a >= inRank)
              return std::nullopt;
            reduced[a] = true;
          }
        } else {
          if (r.getNoopWithEmptyAxes())
            return toPartial(*in);
          reduced.assign(inRank, true);
        }
        Partial out;
        for (int64_t i = 0; i < inRank; ++i) {
          if (!reduced[i])
            out.push_back((*in)[i]);
          else if (r.getKeepdims())
            out.push_back(SymPoly::constant(1));
        }
        return out;
      })
      .Case<SplitOp>([&](SplitOp s) -> std::optional<Partial> {
        std::optional<Polys> in = dimsOf(s.getInput());
        int64_t axis = s.getAxis();
        if (!in || static_cast<int64_t>(in->size()) != rank || axis < 0 || axis >= rank)
          return std::nullopt;
        unsigned resultIndex = cast<OpResult>(value).getResultNumber();
        Partial out = toPartial(*in);
        out[axis].reset();
        if (s.getSplit()) {
          std::optional<Polys> sizes = elementsOf(s.getSplit());
          if (sizes && sizes->size() == s.getNumResults())
            out[axis] = (*sizes)[resultIndex];
        } else {
          int64_t parts = s.getNumResults();
          const SymPoly &d = (*in)[axis];
          if (std::optional<int64_t> cd = d.getConstant()) {
            int64_t chunk = (*cd + parts - 1) / parts;
            int64_t begin = std::min<int64_t>(chunk * resultIndex, *cd);
            out[axis] = SymPoly::constant(std::min<int64_t>(chunk, *cd - begin));
          } else {
            out[axis] = SymPoly::divExact(d, SymPoly::constant(parts));
          }
        }
        return out;
      })
      .Default([](Operation *) { return std::nullopt; });
}

//===----------------------------------------------------------------------===//
// Element rules
//===----------------------------------------------------------------------===//

std::optional<Partial> ShapeAnalysis::computeElements(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  auto resultType = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> resultShape(resultType.getShape());
  int64_t count = resultType.getNumElements();
  auto elementsOf = [&](Value v) -> std::optional<Polys> { return getElements(v); };
  auto toPartial = [](const Polys &p) {
    Partial r;
    for (const SymPoly &x : p)
      r.push_back(x);
    return r;
  };
  auto constantsOf = [&](Value v) -> std::optional<SmallVector<int64_t>> {
    std::optional<Polys> e = elementsOf(v);
    if (!e)
      return std::nullopt;
    return allConstant(*e);
  };
  // Elementwise n-ary op over broadcast operands.
  auto elementwise = [&](function_ref<std::optional<SymPoly>(ArrayRef<SymPoly>)> fn)
      -> std::optional<Partial> {
    SmallVector<Polys> operands;
    SmallVector<SmallVector<int64_t>> shapes;
    for (Value operand : op->getOperands()) {
      std::optional<Polys> e = elementsOf(operand);
      std::optional<SmallVector<int64_t>> shape = staticShape(operand.getType());
      if (!e || !shape)
        return std::nullopt;
      operands.push_back(*e);
      shapes.push_back(*shape);
    }
    Partial out;
    for (int64_t i = 0; i < count; ++i) {
      SmallVector<SymPoly> args;
      for (size_t k = 0; k < operands.size(); ++k)
        args.push_back(operands[k][broadcastIndex(resultShape, shapes[k], i)]);
      out.push_back(fn(args));
    }
    return out;
  };
  // Comparisons: 1/0 when the difference a - b is decided.
  auto compare = [&](function_ref<std::optional<bool>(const SymPoly &)> onDiff) {
    return elementwise([&](ArrayRef<SymPoly> a) -> std::optional<SymPoly> {
      std::optional<SymPoly> diff = SymPoly::sub(a[0], a[1]);
      if (!diff)
        return std::nullopt;
      std::optional<bool> r = onDiff(*diff);
      if (!r)
        return std::nullopt;
      return SymPoly::constant(*r ? 1 : 0);
    });
  };
  // Sign of a difference: -1, 0, 1 when decided. >= 0 and > 0 are separate.
  auto isZero = [](const SymPoly &d) { return d.getConstant() == 0; };
  auto nonNeg = [&](const SymPoly &d) { return isNonNegative(d); };
  auto neg = [&](const SymPoly &d) -> std::optional<SymPoly> {
    return SymPoly::sub(SymPoly::constant(0), d);
  };
  auto positive = [&](const SymPoly &d) {
    // > 0 without the non-empty assumption: non-negative plus a positive constant.
    if (!isNonNegative(d))
      return false;
    auto it = d.getTerms().find({});
    return it != d.getTerms().end() && it->second > 0;
  };

  if (isa<AddOp>(op))
    return elementwise([](ArrayRef<SymPoly> a) { return SymPoly::add(a[0], a[1]); });
  if (isa<SubOp>(op))
    return elementwise([](ArrayRef<SymPoly> a) { return SymPoly::sub(a[0], a[1]); });
  if (isa<MulOp>(op))
    return elementwise([](ArrayRef<SymPoly> a) { return SymPoly::mul(a[0], a[1]); });
  if (isa<DivOp>(op))
    return elementwise([&](ArrayRef<SymPoly> a) -> std::optional<SymPoly> {
      std::optional<int64_t> ca = a[0].getConstant(), cb = a[1].getConstant();
      // Truncating and flooring division agree on non-negative operands.
      if (ca && cb && *cb > 0 && *ca >= 0)
        return SymPoly::constant(*ca / *cb);
      if (cb && *cb != 0)
        return SymPoly::divExact(a[0], a[1]);
      return std::nullopt;
    });
  if (isa<NegOp>(op))
    return elementwise([&](ArrayRef<SymPoly> a) { return neg(a[0]); });
  if (isa<MaxOp, MinOp>(op)) {
    bool isMax = isa<MaxOp>(op);
    return elementwise([&](ArrayRef<SymPoly> a) -> std::optional<SymPoly> {
      std::optional<SymPoly> diff = SymPoly::sub(a[0], a[1]);
      if (!diff)
        return std::nullopt;
      if (nonNeg(*diff))
        return isMax ? a[0] : a[1];
      if (std::optional<SymPoly> nd = neg(*diff); nd && nonNeg(*nd))
        return isMax ? a[1] : a[0];
      return std::nullopt;
    });
  }
  if (isa<EqualOp>(op))
    return compare([&](const SymPoly &d) -> std::optional<bool> {
      if (isZero(d))
        return true;
      std::optional<SymPoly> nd = neg(d);
      if (positive(d) || (nd && positive(*nd)) || d.isConstant())
        return false;
      return std::nullopt;
    });
  if (isa<LessOp, GreaterOrEqualOp>(op)) {
    bool less = isa<LessOp>(op);
    return compare([&](const SymPoly &d) -> std::optional<bool> {
      // a < b  <=>  b - a > 0.
      std::optional<SymPoly> nd = neg(d);
      if (nonNeg(d))
        return !less; // a >= b
      if (nd && positive(*nd))
        return less;
      return std::nullopt;
    });
  }
  if (isa<GreaterOp, LessOrEqualOp>(op)) {
    bool greater = isa<GreaterOp>(op);
    return compare([&](const SymPoly &d) -> std::optional<bool> {
      std::optional<SymPoly> nd = neg(d);
      if (positive(d))
        return greater; // a > b
      if (nd && nonNeg(*nd))
        return !greater; // a <= b
      return std::nullopt;
    });
  }
  if (isa<AndOp, OrOp>(op)) {
    bool isAnd = isa<AndOp>(op);
    return elementwise([&](ArrayRef<SymPoly> a) -> std::optional<SymPoly> {
      std::optional<int64_t> x = a[0].getConstant(), y = a[1].getConstant();
      int64_t absorbing = isAnd ? 0 : 1;
      if (x == absorbing || y == absorbing)
        return SymPoly::constant(absorbing);
      if (x && y)
        return SymPoly::constant(isAnd ? (*x && *y) : (*x || *y));
      return std::nullopt;
    });
  }
  if (isa<NotOp>(op))
    return elementwise([](ArrayRef<SymPoly> a) -> std::optional<SymPoly> {
      if (std::optional<int64_t> x = a[0].getConstant())
        return SymPoly::constant(*x ? 0 : 1);
      return std::nullopt;
    });
  if (isa<WhereOp>(op))
    return elementwise([](ArrayRef<SymPoly> a) -> std::optional<SymPoly> {
      std::optional<int64_t> c = a[0].getConstant();
      if (!c)
        return a[1] == a[2] ? std::optional<SymPoly>(a[1]) : std::nullopt;
      return *c ? a[1] : a[2];
    });
  if (auto cast = dyn_cast<CastOp>(op)) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    if (!from.isSignlessInteger())
      return std::nullopt;
    bool toBool = resultType.getElementType().isInteger(1);
    return elementwise([&](ArrayRef<SymPoly> a) -> std::optional<SymPoly> {
      if (!toBool)
        return a[0]; // narrowing is checked against the type in compute()
      if (std::optional<int64_t> x = a[0].getConstant())
        return SymPoly::constant(*x != 0);
      return std::nullopt;
    });
  }
  // Ops that keep the elements in row-major order.
  if (isa<ReshapeOp, SqueezeOp, UnsqueezeOp, IdentityOp, FlattenOp>(op)) {
    std::optional<Polys> in = elementsOf(op->getOperand(0));
    if (!in || static_cast<int64_t>(in->size()) != count)
      return std::nullopt;
    return toPartial(*in);
  }

  return llvm::TypeSwitch<Operation *, std::optional<Partial>>(op)
      .Case<ConstantOp>([&](ConstantOp c) -> std::optional<Partial> {
        auto values = c.getValue().tryGetValues<APInt>();
        if (!values)
          return std::nullopt;
        bool isBool = resultType.getElementType().isInteger(1);
        Partial out;
        for (APInt v : *values)
          out.push_back(SymPoly::constant(isBool ? v.getZExtValue() : v.getSExtValue()));
        return out;
      })
      .Case<ShapeOp>([&](ShapeOp s) -> std::optional<Partial> {
        std::optional<Polys> dims = getDims(s.getInput());
        if (!dims)
          return std::nullopt;
        int64_t rank = dims->size();
        auto clampDim = [&](int64_t x) {
          if (x < 0)
            x += rank;
          return std::clamp<int64_t>(x, 0, rank);
        };
        int64_t start = clampDim(s.getStart());
        int64_t end = s.getEnd() ? clampDim(*s.getEnd()) : rank;
        Partial out;
        for (int64_t i = start; i < end; ++i)
          out.push_back((*dims)[i]);
        return out;
      })
      .Case<GatherOp>([&](GatherOp g) -> std::optional<Partial> {
        std::optional<Polys> data = elementsOf(g.getData());
        std::optional<SmallVector<int64_t>> idx = constantsOf(g.getIndices());
        if (!data || !idx || g.getAxis() != 0 ||
            cast<RankedTensorType>(g.getData().getType()).getRank() != 1)
          return std::nullopt;
        int64_t n = data->size();
        Partial out;
        for (int64_t i : *idx) {
          if (i < 0)
            i += n;
          if (i < 0 || i >= n)
            return std::nullopt;
          out.push_back((*data)[i]);
        }
        return out;
      })
      .Case<SliceOp>([&](SliceOp s) -> std::optional<Partial> {
        std::optional<Polys> data = elementsOf(s.getData());
        auto starts = constantsOf(s.getStarts()), ends = constantsOf(s.getEnds()),
             axes = constantsOf(s.getAxes()), steps = constantsOf(s.getSteps());
        if (!data || !starts || !ends || !axes || !steps || axes->size() != 1 ||
            starts->size() != 1 || ends->size() != 1 || steps->size() != 1 ||
            cast<RankedTensorType>(s.getData().getType()).getRank() != 1 ||
            ((*axes)[0] != 0 && (*axes)[0] != -1) || (*steps)[0] == 0)
          return std::nullopt;
        int64_t n = data->size(), step = (*steps)[0];
        int64_t b = clampIndex((*starts)[0], n, true, step);
        int64_t e = clampIndex((*ends)[0], n, false, step);
        Partial out;
        for (int64_t i = b; step > 0 ? i < e : i > e; i += step)
          out.push_back((*data)[i]);
        return out;
      })
      .Case<ConcatOp>([&](ConcatOp c) -> std::optional<Partial> {
        if (resultType.getRank() != 1)
          return std::nullopt;
        Partial out;
        for (Value in : c.getInputs()) {
          std::optional<Polys> e = elementsOf(in);
          if (!e)
            return std::nullopt;
          for (const SymPoly &p : *e)
            out.push_back(p);
        }
        return out;
      })
      .Case<ExpandOp>([&](ExpandOp e) -> std::optional<Partial> {
        std::optional<Polys> in = elementsOf(e.getInput());
        std::optional<SmallVector<int64_t>> shape = staticShape(e.getInput().getType());
        if (!in || !shape)
          return std::nullopt;
        Partial out;
        for (int64_t i = 0; i < count; ++i)
          out.push_back((*in)[broadcastIndex(resultShape, *shape, i)]);
        return out;
      })
      .Case<ConstantOfShapeOp>([&](ConstantOfShapeOp c) -> std::optional<Partial> {
        auto values = c.getValue().tryGetValues<APInt>();
        if (!values || c.getValue().getNumElements() != 1)
          return std::nullopt;
        APInt v = *values->begin();
        int64_t x = resultType.getElementType().isInteger(1) ? v.getZExtValue() : v.getSExtValue();
        return Partial(count, SymPoly::constant(x));
      })
      .Case<RangeOp>([&](RangeOp r) -> std::optional<Partial> {
        auto start = constantsOf(r.getStart()), delta = constantsOf(r.getDelta());
        if (!start || !delta || start->size() != 1 || delta->size() != 1)
          return std::nullopt;
        Partial out;
        for (int64_t i = 0; i < count; ++i)
          out.push_back(SymPoly::constant((*start)[0] + i * (*delta)[0]));
        return out;
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::string ShapeAnalysis::describe(Value value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto print = [&](const Polys &ps) {
    os << "[";
    llvm::interleaveComma(ps, os, [&](const SymPoly &p) {
      if (p.getTerms().empty()) {
        os << "0";
        return;
      }
      bool first = true;
      for (const auto &[mono, coeff] : p.getTerms()) {
        if (!first)
          os << "+";
        first = false;
        os << coeff;
        for (unsigned sym : mono)
          os << "*" << (symbolIsDim[sym] ? "d" : "v") << sym;
      }
    });
    os << "]";
  };
  Info info = lookup(value);
  if (info.dims)
    print(*info.dims);
  if (info.elements) {
    os << " = ";
    print(*info.elements);
  }
  return s;
}
