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

/// Rough relative NVRTC cost of one kernel of a family: ptxas's seconds for
/// one instantiation, measured on 2 cores (session 20,
/// bench/results/tinyllama-1.1b-compile.md): infer_attention 2.1, the mma.sync
/// paged prefill 1.8, infer_kv_attention 1.1, infer_sample 1.0, infer_gemv 0.9,
/// infer_kv_decode 0.8, a row GEMV 0.4; the wgmma prefill taken as the mma.sync
/// one's.
int kernelCost(const std::string &family) {
  static const std::map<std::string, int> costs = {
      {"infer_attention", 5},   {"infer_kv_prefill_attention", 5},
      {"infer_kv_prefill_attention_wgmma", 5}, {"infer_kv_attention", 3},
      {"infer_sample", 3},      {"infer_gemv", 2},
      {"infer_gemv_fused", 2},  {"infer_kv_decode", 2}};
  auto found = costs.find(family);
  return found == costs.end() ? 1 : found->second;
}
} // namespace

std::string kernelFamilyOf(const std::string &expression) {
  if (expression.rfind(kElementwiseKernelPrefix, 0) == 0)
    return kElementwiseKernelPrefix;
  return expression.substr(0, expression.find('<'));
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
