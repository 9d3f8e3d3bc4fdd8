//===- FoldedLaunches.cpp - launches another launch's kernels may do ------===//

#include "runtime/cuda/FoldedLaunches.h"

#include <string>

namespace infer::cuda {
namespace art = artifact;

StatusOr<FoldedLaunches>
foldedLaunches(const art::ExecProgram &program,
               const google::protobuf::RepeatedPtrField<art::CudaLaunch> &launches,
               const std::string &path) {
  const int count = program.launches_size();
  if (launches.size() != count)
    return dataLossError(path + ": " + std::to_string(launches.size()) +
                         " cuda launch records for " + std::to_string(count) + " launches");
  FoldedLaunches maps;
  for (std::vector<int> *map : {&maps.prologue, &maps.epilogue, &maps.qkvGemm, &maps.prologueOf,
                                &maps.epilogueOf, &maps.qkvAttentionOf})
    map->assign(size_t(count), -1);
  // One recorded index: in range, before (prologue, qkv GEMM) or after
  // (epilogue) launch `i`, of one of `kinds`, not claimed by another launch.
  auto record = [&](int i, int target, const char *field, bool before,
                    std::initializer_list<art::Launch::Kind> kinds, std::vector<int> &forward,
                    std::vector<int> &backward) -> Status {
    const std::string where =
        path + ": launch " + std::to_string(i) + "'s " + field + " " + std::to_string(target);
    if (target < 0 || target >= count || (before ? target >= i : target <= i))
      return dataLossError(where + " is not a launch " + (before ? "before" : "after") + " it");
    bool kindOk = false;
    for (art::Launch::Kind kind : kinds)
      kindOk = kindOk || program.launches(target).kind() == kind;
    if (!kindOk)
      return dataLossError(where + " is a " +
                           art::Launch::Kind_Name(program.launches(target).kind()) +
                           " launch, which it cannot fold");
    if (backward[size_t(target)] >= 0)
      return dataLossError(where + " is launch " + std::to_string(backward[size_t(target)]) +
                           "'s too");
    forward[size_t(i)] = target;
    backward[size_t(target)] = i;
    return okStatus();
  };
  for (int i = 0; i < count; ++i) {
    const art::CudaLaunch &cuda = launches.Get(i);
    const art::Launch::Kind kind = program.launches(i).kind();
    if ((cuda.has_prologue_launch() || cuda.has_epilogue_launch() || cuda.has_qkv_gemm_launch()) &&
        kind != art::Launch::GEMM && kind != art::Launch::KV_ATTENTION)
      return dataLossError(path + ": launch " + std::to_string(i) +
                           " records launches it folds but is neither a GEMM nor a KV_ATTENTION");
    const bool gemm = kind == art::Launch::GEMM;
    if (cuda.has_prologue_launch())
      RETURN_IF_ERROR(
          record(i, cuda.prologue_launch(), "prologue_launch", true,
                 gemm ? std::initializer_list<art::Launch::Kind>{art::Launch::RMS_NORM,
                                                                 art::Launch::GATED_ACTIVATION}
                      : std::initializer_list<art::Launch::Kind>{art::Launch::ROTARY},
                 maps.prologue, maps.prologueOf));
    if (cuda.has_epilogue_launch()) {
      if (!gemm)
        return dataLossError(path + ": launch " + std::to_string(i) +
                             " records an epilogue_launch but is not a GEMM");
      RETURN_IF_ERROR(record(i, cuda.epilogue_launch(), "epilogue_launch", false,
                             {art::Launch::GATED_ACTIVATION}, maps.epilogue, maps.epilogueOf));
    }
    if (cuda.has_qkv_gemm_launch()) {
      if (gemm || !cuda.has_prologue_launch())
        return dataLossError(path + ": launch " + std::to_string(i) +
                             " records a qkv_gemm_launch but is not a KV_ATTENTION with a rotary");
      RETURN_IF_ERROR(record(i, cuda.qkv_gemm_launch(), "qkv_gemm_launch", true,
                             {art::Launch::GEMM}, maps.qkvGemm, maps.qkvAttentionOf));
    }
  }
  return maps;
}

} // namespace infer::cuda
