//===- NvrtcPrograms.cpp - which kernels share an NVRTC program ------------===//
//
// groupKernelsIntoPrograms (CudaCodegen.h): the artifact's kernels are
// compiled as up to kMaxNvrtcPrograms NVRTC programs at once, each in a child
// process (NvrtcProcesses.cpp), since one program keeps only ~2 cores busy
// (docs/codegen.md). A family (a template's instantiations) stays in one
// program; the grouping depends on the kernels alone, so the artifact's bytes
// do not depend on the machine.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaCodegen.h"

#include <algorithm>
#include <map>

namespace infer::codegen {
namespace {

/// Rough relative NVRTC cost of one kernel of a family, in about half-seconds
/// of a program on the 16-core H200 machine (infer-compile prints each
/// program's seconds; session 22, bench/results/tinyllama-1.1b-compile.md):
/// infer_gemv ~5 s alone (one kernel over eight tilings and both weight
/// layouts), infer_kv_decode ~2.3 s, a row GEMV ~0.25 s; the attention kernels
/// and the sampler between (after the head-size classes: infer_attention with
/// infer_kv_attention 6.1 s, the paged prefill with infer_sample 5.9 s).
int kernelCost(const std::string &family) {
  static const std::map<std::string, int> costs = {
      {"infer_gemv", 10},        {"infer_gemv_fused", 10},
      {"infer_attention", 6},    {"infer_kv_prefill_attention", 6},
      {"infer_kv_prefill_attention_wgmma", 6}, {"infer_kv_attention", 5},
      {"infer_kv_decode", 5},    {"infer_qkv_decode", 6},  {"infer_sample", 4}};
  auto found = costs.find(family);
  return found == costs.end() ? 1 : found->second;
}
} // namespace

std::string kernelFamilyOf(const std::string &expression) {
  if (expression.rfind(kElementwiseKernelPrefix, 0) == 0)
    return kElementwiseKernelPrefix;
  // Unqualified: codegen names "infer::kernels::infer_gemv<...>", the cost
  // table the template alone (until session 22 no name matched it, and every
  // family cost 1 a kernel).
  std::string qualified = expression.substr(0, expression.find('<'));
  size_t scope = qualified.rfind("::");
  return scope == std::string::npos ? qualified : qualified.substr(scope + 2);
}

std::vector<std::vector<std::string>>
groupKernelsIntoPrograms(const std::vector<std::string> &expressions, size_t maxPrograms) {
  std::map<std::string, std::vector<std::string>> families;
  for (const std::string &expression : expressions)
    families[kernelFamilyOf(expression)].push_back(expression);
  struct Family {
    int cost;
    std::string name;
  };
  std::vector<Family> order;
  for (const auto &[name, members] : families)
    order.push_back({kernelCost(name) * int(members.size()), name});
  std::stable_sort(order.begin(), order.end(),
                   [](const Family &a, const Family &b) { return a.cost > b.cost; });
  const size_t count = std::max<size_t>(1, std::min(maxPrograms, order.size()));
  std::vector<std::vector<std::string>> programs(count);
  std::vector<int> load(count, 0);
  for (const Family &family : order) {
    size_t least = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    load[least] += family.cost;
    const std::vector<std::string> &members = families[family.name];
    programs[least].insert(programs[least].end(), members.begin(), members.end());
  }
  return programs;
}

} // namespace infer::codegen
