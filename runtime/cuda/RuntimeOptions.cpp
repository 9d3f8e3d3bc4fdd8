//===- RuntimeOptions.cpp - the cuda backend's INFER_* switches -----------===//

#include "runtime/cuda/RuntimeOptions.h"

#include "runtime/cuda/CudaApi.h"

#include <cstdlib>
#include <sstream>

namespace infer::cuda {

namespace {

/// A switch of "0" (off) or "1" (on), `unset` when the variable is not set.
StatusOr<bool> binarySwitch(const char *name, const char *value, bool unset) {
  if (!value)
    return unset;
  if (std::string(value) == "0" || std::string(value) == "1")
    return std::string(value) == "1";
  return invalidArgumentError(std::string(name) + " must be 0 or 1, not '" + value + "'");
}

} // namespace

StatusOr<RuntimeOptions>
parseRuntimeOptions(const std::function<const char *(const char *)> &environment) {
  RuntimeOptions options;
  struct Switch {
    const char *name;
    bool *field;
  };
  for (const Switch &entry : {Switch{"INFER_CUDA_GRAPHS", &options.graphs},
                              Switch{"INFER_PREFILL_GRAPHS", &options.prefillGraphs},
                              Switch{"INFER_UPLOAD_STREAM", &options.uploadStream}}) {
    ASSIGN_OR_RETURN(*entry.field, binarySwitch(entry.name, environment(entry.name), true));
  }
  if (const char *pdl = environment("INFER_PDL")) {
    const std::string value = pdl;
    if (value != "0" && value != "1")
      return invalidArgumentError("INFER_PDL must be 0 (no step) or 1 (every step), not '" + value +
                                  "' (unset: decode steps)");
    options.programmaticLaunch = value == "0" ? ProgrammaticLaunch::Off : ProgrammaticLaunch::All;
  }
  ASSIGN_OR_RETURN(options.sharedCarveout,
                   sharedCarveoutSetting(environment("INFER_SMEM_CARVEOUT")));
  if (const char *profile = environment("INFER_PROFILE_STEPS")) {
    std::stringstream list(profile);
    for (std::string item; std::getline(list, item, ',');) {
      char *end = nullptr;
      const long long step = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || step < 1)
        return invalidArgumentError(
            std::string("INFER_PROFILE_STEPS must be step calls (1, 2, ...) "
                        "separated by commas, not '") +
            profile + "'");
      options.profiledSteps.push_back(step);
    }
  }
  for (const char *retired : {"INFER_GEMM_TUNE", "INFER_GEMM_TUNE_LOG", "INFER_GEMM_TUNING_CACHE"})
    if (const char *value = environment(retired); value && *value)
      options.warnings.push_back(std::string(retired) +
                                 " is ignored: the runtime no longer times cuBLASLt; "
                                 "`infer-compile --tune` records the algorithms in the artifact");
  // Kernel choices the artifact now makes (exec.gemm / exec.kv_attention, docs/exec.md).
  for (const auto &[retired, instead] :
       {std::pair{"INFER_GEMV_MMA_MIN", "`infer-compile --mma-gemv-min-tokens N`"},
        std::pair{"INFER_KV_PREFILL", "`infer-compile --no-prefill-kernel`"},
        std::pair{"INFER_GEMV", "the decode GEMVs exec.gemm names"},
        std::pair{"INFER_GEMV_ROWS", "the decode GEMVs exec.gemm names"}})
    if (const char *value = environment(retired); value && *value)
      options.warnings.push_back(std::string(retired) +
                                 " is ignored: the artifact says which kernels run (" + instead +
                                 ")");
  return options;
}

StatusOr<RuntimeOptions> runtimeOptionsFromEnvironment() {
  return parseRuntimeOptions([](const char *name) { return std::getenv(name); });
}

} // namespace infer::cuda
