//===- Awq.cpp - activation-aware scales for int4 weights -----------------===//

#include "compiler/pipeline/Awq.h"

#include "compiler/pipeline/Pipeline.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/Interpreter/Interpreter.h"
#include "runtime/base/Quantization.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace infer;
using interp::Tensor;

namespace {

constexpr int kAlphaSteps = 20;    // α = 0, 0.05, ..., 1
constexpr int64_t kMaxRows = 4096; // calibration rows kept per linear
constexpr int kClipSteps = 10;     // clip ratios 1, 0.95, ..., 0.5

struct Site {
  graph::QuantizedLinearOp linear;
  graph::QuantizeWeightOp quantize;
  int64_t n = 0, k = 0;
  std::vector<double> gram;    // XᵀX [k, k] over the calibration rows
  std::vector<double> meanAbs; // mean |x_j|
  int64_t rows = 0;
  std::vector<float> weight; // [n, k]
};

/// The int4 quantized linears AWQ scales, in walk order (the same in a clone).
SmallVector<graph::QuantizedLinearOp> awqLinears(func::FuncOp func) {
  SmallVector<graph::QuantizedLinearOp> linears;
  func.walk([&](graph::QuantizedLinearOp op) {
    if (op.getQ().getDefiningOp<graph::QuantizeWeightOp>() && op.getScheme() == "int4")
      linears.push_back(op);
  });
  return linears;
}

/// `func` with each AWQ linear's input and weight appended to its results.
void appendProbes(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  for (graph::QuantizedLinearOp op : awqLinears(func)) {
    results.push_back(op.getInput());
    results.push_back(op.getQ().getDefiningOp<graph::QuantizeWeightOp>().getWeight());
  }
  OpBuilder builder(ret);
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  func.setFunctionType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
}

/// Σ_n d_n G d_nᵀ for D = W_eff - W: the summed squared output error over
/// the rows G = XᵀX was made of.
double outputError(const Site &site, const std::vector<float> &effective) {
  double total = 0;
  std::vector<double> d(static_cast<size_t>(site.k));
  for (int64_t row = 0; row < site.n; ++row) {
    for (int64_t j = 0; j < site.k; ++j)
      d[j] = double(effective[row * site.k + j]) - site.weight[row * site.k + j];
    for (int64_t i = 0; i < site.k; ++i) {
      double dot = 0;
      const double *g = site.gram.data() + i * site.k;
      for (int64_t j = 0; j < site.k; ++j)
        dot += g[j] * d[j];
      total += d[i] * dot;
    }
  }
  return total;
}

/// The weight int4 with scales f (and clip ratios) gives:
/// dequantize(RTN(clip(w * f))) / f.
std::vector<float> effectiveWeight(const Site &site, const std::vector<float> &f, int64_t group,
                                   const std::vector<float> *clip = nullptr) {
  std::vector<float> scaled(site.weight);
  quant::scaleColumns(scaled.data(), site.n, site.k, f.data());
  if (clip)
    quant::clipGroups(scaled.data(), site.n, site.k, group, clip->data());
  std::vector<uint8_t> q(
      static_cast<size_t>(quant::quantizedBytes(quant::Scheme::Int4, site.n, site.k)));
  std::vector<float> scales(
      static_cast<size_t>(quant::scaleCount(quant::Scheme::Int4, site.n, site.k, group)));
  quant::quantize(quant::Scheme::Int4, scaled.data(), site.n, site.k, group, q.data(),
                  scales.data());
  std::vector<float> out(scaled.size());
  for (int64_t row = 0; row < site.n; ++row) {
    quant::dequantizeRow(quant::Scheme::Int4, q.data(), scales.data(), nullptr, site.k, group, row,
                         out.data() + row * site.k);
    for (int64_t j = 0; j < site.k; ++j)
      out[row * site.k + j] /= f[j];
  }
  return out;
}

/// f = m^α normalized so that max(f) * min(f) = 1 (AWQ's form).
std::vector<float> scalesFor(const std::vector<double> &meanAbs, double alpha) {
  std::vector<double> f(meanAbs.size());
  for (size_t j = 0; j < f.size(); ++j)
    f[j] = std::pow(std::max(meanAbs[j], 1e-6), alpha);
  auto [low, high] = std::minmax_element(f.begin(), f.end());
  double norm = std::sqrt(*low * *high);
  std::vector<float> out(f.size());
  for (size_t j = 0; j < f.size(); ++j)
    out[j] = static_cast<float>(f[j] / norm);
  return out;
}

/// AWQ's second half, the clipping search: for each row's group of w * f,
/// the ratio c (1, 0.95, ..., 0.5) of its max |w f| to clamp it to whose RTN
/// leaves the least output error of the group's own columns (d G_gg dᵀ:
/// cross-group terms left out, as AWQ does). Returns the ratios [n, k /
/// group]; `clipped` counts those below 1.
std::vector<float> clipRatios(const Site &site, const std::vector<float> &f, int64_t group,
                              int64_t &clipped) {
  const int64_t groups = site.k / group;
  std::vector<float> ratios(static_cast<size_t>(site.n * groups), 1.0f);
  std::vector<float> v(static_cast<size_t>(group)), trial(v.size()), deq(v.size());
  std::vector<uint8_t> q(static_cast<size_t>(group / 2));
  clipped = 0;
  for (int64_t row = 0; row < site.n; ++row)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t g0 = g * group;
      const float *w = site.weight.data() + row * site.k + g0;
      float top = 0;
      for (int64_t j = 0; j < group; ++j)
        v[j] = w[j] * f[g0 + j], top = std::max(top, std::fabs(v[j]));
      if (!(top > 0) || !std::isfinite(top))
        continue;
      double best = -1;
      float bestRatio = 1.0f;
      for (int step = 0; step <= kClipSteps; ++step) {
        const float ratio = 1.0f - 0.05f * float(step), bound = top * ratio;
        for (int64_t j = 0; j < group; ++j)
          trial[j] = std::clamp(v[j], -bound, bound);
        float scale = 0;
        quant::quantize(quant::Scheme::Int4, trial.data(), 1, group, group, q.data(), &scale);
        quant::dequantizeRow(quant::Scheme::Int4, q.data(), &scale, nullptr, group, group, 0,
                             deq.data());
        for (int64_t j = 0; j < group; ++j) // the error d of the group's weights
          deq[j] = float(double(deq[j]) / f[g0 + j] - w[j]);
        double error = 0;
        for (int64_t i = 0; i < group; ++i) {
          const double *gram = site.gram.data() + (g0 + i) * site.k + g0;
          double dot = 0;
          for (int64_t j = 0; j < group; ++j)
            dot += gram[j] * deq[j];
          error += deq[i] * dot;
        }
        if (best < 0 || error < best)
          best = error, bestRatio = ratio;
      }
      ratios[row * groups + g] = bestRatio;
      clipped += bestRatio < 1.0f;
    }
  return ratios;
}

} // namespace

llvm::Error pipeline::applyAwq(ModuleOp module, const std::vector<std::vector<int64_t>> &prompts,
                               llvm::raw_ostream &log) {
  func::FuncOp entry = pipeline::singleFunction(module);
  if (!entry || entry.getNumArguments() != 1)
    return llvm::createStringError("--method awq needs a model with one function whose only "
                                   "input is the token ids");
  std::vector<Site> sites;
  for (graph::QuantizedLinearOp op : awqLinears(entry)) {
    Site site{op, op.getQ().getDefiningOp<graph::QuantizeWeightOp>()};
    auto q = cast<RankedTensorType>(op.getQ().getType());
    site.n = q.getDimSize(0), site.k = q.getDimSize(1) * 2;
    site.gram.assign(static_cast<size_t>(site.k * site.k), 0.0);
    site.meanAbs.assign(static_cast<size_t>(site.k), 0.0);
    sites.push_back(std::move(site));
  }
  if (sites.empty())
    return llvm::Error::success();

  OwningOpRef<ModuleOp> probe = module.clone();
  func::FuncOp func = pipeline::singleFunction(*probe);
  appendProbes(func);
  size_t base = func.getNumResults() - 2 * sites.size();
  for (const std::vector<int64_t> &prompt : prompts) {
    if (prompt.empty() || sites.front().rows >= kMaxRows)
      continue;
    Tensor ids = Tensor::fromI64({1, static_cast<int64_t>(prompt.size())}, prompt);
    auto outputs = interp::runFunction(func, {ids});
    if (!outputs)
      return llvm::createStringError("--method awq: " + llvm::toString(outputs.takeError()));
    for (size_t s = 0; s < sites.size(); ++s) {
      Site &site = sites[s];
      const Tensor &x = (*outputs)[base + 2 * s];
      if (site.weight.empty()) {
        const Tensor &w = (*outputs)[base + 2 * s + 1];
        bool transposed = site.quantize.getTranspose(); // w is [k, n]
        site.weight.resize(static_cast<size_t>(site.n * site.k));
        for (int64_t row = 0; row < site.n; ++row)
          for (int64_t j = 0; j < site.k; ++j)
            site.weight[row * site.k + j] =
                w.f32()[transposed ? j * site.n + row : row * site.k + j];
      }
      for (int64_t r = 0; r < x.numElements() / site.k; ++r) {
        const float *v = x.f32() + r * site.k;
        for (int64_t i = 0; i < site.k; ++i) {
          site.meanAbs[i] += std::fabs(v[i]);
          for (int64_t j = 0; j < site.k; ++j)
            site.gram[i * site.k + j] += double(v[i]) * v[j];
        }
        ++site.rows;
      }
    }
  }

  int scaled = 0;
  int64_t clippedGroups = 0, groups = 0;
  double before = 0, after = 0;
  for (Site &site : sites) {
    if (site.rows == 0)
      continue;
    for (double &m : site.meanAbs)
      m /= double(site.rows);
    int64_t group = static_cast<int64_t>(site.quantize.getGroupSize());
    std::vector<float> ones(static_cast<size_t>(site.k), 1.0f);
    double rtn = outputError(site, effectiveWeight(site, ones, group)), best = rtn;
    std::vector<float> bestScales;
    for (int step = 1; step <= kAlphaSteps; ++step) {
      std::vector<float> f = scalesFor(site.meanAbs, double(step) / kAlphaSteps);
      double error = outputError(site, effectiveWeight(site, f, group));
      if (error < best)
        best = error, bestScales = std::move(f);
    }
    // The clipping search on the chosen scales (or none); kept where the
    // whole layer's output error falls.
    const std::vector<float> &f = bestScales.empty() ? ones : bestScales;
    int64_t clippedHere = 0;
    std::vector<float> clip = clipRatios(site, f, group, clippedHere);
    groups += site.n * (site.k / group);
    if (clippedHere) {
      double error = outputError(site, effectiveWeight(site, f, group, &clip));
      if (error < best)
        best = error, clippedGroups += clippedHere;
      else
        clip.clear();
    } else {
      clip.clear();
    }
    before += rtn, after += best;
    if (bestScales.empty() && clip.empty())
      continue;
    OpBuilder builder(site.quantize);
    Location loc = site.quantize.getLoc();
    ++scaled;
    if (!clip.empty()) {
      auto type = RankedTensorType::get({site.n, site.k / group}, builder.getF32Type());
      site.quantize.getClipMutable().assign(graph::ConstantOp::create(
          builder, loc, DenseElementsAttr::get(type, ArrayRef<float>(clip))));
    }
    if (bestScales.empty())
      continue;
    auto type = RankedTensorType::get({site.k}, builder.getF32Type());
    Value scales = graph::ConstantOp::create(
        builder, loc, DenseElementsAttr::get(type, ArrayRef<float>(bestScales)));
    site.quantize.getInputScaleMutable().assign(scales);
    site.linear.getInputScaleMutable().assign(scales);
  }
  log << llvm::format("awq: %d of %zu int4 linears scaled or clipped (%lld of %lld groups "
                      "clipped); output error on the calibration activations %.4g of RTN's\n",
                      scaled, sites.size(), static_cast<long long>(clippedGroups),
                      static_cast<long long>(groups), before > 0 ? after / before : 1.0);
  return llvm::Error::success();
}
