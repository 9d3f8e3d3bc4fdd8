//===- NvrtcProgramsTest.cpp - kernels compiled as several NVRTC programs --===//
//
// codegen/cuda: groupKernelsIntoPrograms (which kernels share an NVRTC
// program) and compileInSeparateProcesses (the programs compiled at once, each
// in a child process), whose output must be byte-identical to compiling the
// same programs one after another in this process.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/Nvrtc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

namespace {
using infer::codegen::compileInSeparateProcesses;
using infer::codegen::groupKernelsIntoPrograms;
using infer::codegen::NvrtcJob;

// As codegen names them (namespace-qualified templates, unqualified
// generated kernels).
const std::vector<std::string> kTinyLlamaKernels = {
    "infer::kernels::infer_embedding<__nv_bfloat16, __nv_bfloat16>",
    "infer::kernels::infer_rms_norm<__nv_bfloat16, __nv_bfloat16>",
    "infer::kernels::infer_gemv_rows<__nv_bfloat16, 1, false>",
    "infer::kernels::infer_gemv_rows<__nv_bfloat16, 1, true>",
    "infer::kernels::infer_gemv_rows<__nv_bfloat16, 0, false>",
    "infer::kernels::infer_kv_decode<__nv_bfloat16, float, 64>",
    "infer::kernels::infer_kv_attention<__nv_bfloat16>",
    "infer::kernels::infer_kv_write<__nv_bfloat16>",
    "infer::kernels::infer_kv_prefill_attention<__nv_bfloat16, 64>",
    "infer::kernels::infer_rotary<__nv_bfloat16, float>",
    "infer::kernels::infer_gated_activation<__nv_bfloat16>",
    "infer::kernels::infer_gemv<__nv_bfloat16>",
    "infer::kernels::infer_sample<__nv_bfloat16>",
    "infer::kernels::infer_attention<__nv_bfloat16, 64>",
    "infer_elementwise_0",
    "infer_elementwise_1",
};

std::string familyOf(const std::string &expression) {
  if (expression.rfind("infer_elementwise_", 0) == 0)
    return "elementwise";
  return expression.substr(0, expression.find('<'));
}

TEST(NvrtcPrograms, EveryKernelInOneProgramFamiliesTogether) {
  auto programs = groupKernelsIntoPrograms(kTinyLlamaKernels);
  EXPECT_EQ(programs.size(), infer::codegen::kMaxNvrtcPrograms);
  std::map<std::string, int> programOf; // expression -> program
  std::map<std::string, std::set<int>> familyPrograms;
  for (int i = 0; i < int(programs.size()); ++i) {
    EXPECT_FALSE(programs[i].empty()) << "program " << i;
    for (const std::string &expression : programs[i]) {
      EXPECT_TRUE(programOf.emplace(expression, i).second) << expression << " twice";
      familyPrograms[familyOf(expression)].insert(i);
    }
  }
  EXPECT_EQ(programOf.size(), kTinyLlamaKernels.size());
  for (const auto &[family, in] : familyPrograms)
    EXPECT_EQ(in.size(), 1u) << family << " split across programs";
  // The costliest family (infer_gemv, ~5 s) has a program of its own, and the
  // attention kernels after it do not share one.
  EXPECT_EQ(programs[size_t(programOf["infer::kernels::infer_gemv<__nv_bfloat16>"])].size(),
            1u);
  EXPECT_NE(programOf["infer::kernels::infer_attention<__nv_bfloat16, 64>"],
            programOf["infer::kernels::infer_kv_prefill_attention<__nv_bfloat16, 64>"]);
  EXPECT_NE(programOf["infer::kernels::infer_attention<__nv_bfloat16, 64>"],
            programOf["infer::kernels::infer_kv_attention<__nv_bfloat16>"]);
}

TEST(NvrtcPrograms, FamiliesAreUnqualifiedTemplateNames) {
  using infer::codegen::kernelFamilyOf;
  EXPECT_EQ(kernelFamilyOf("infer::kernels::infer_gemv<__nv_bfloat16>"), "infer_gemv");
  EXPECT_EQ(kernelFamilyOf("infer_gemv<float>"), "infer_gemv");
  EXPECT_EQ(kernelFamilyOf("infer::kernels::infer_gemv_rows<__half, 1, true>"), "infer_gemv_rows");
  EXPECT_EQ(kernelFamilyOf("infer_elementwise_3"), infer::codegen::kElementwiseKernelPrefix);
}

TEST(NvrtcPrograms, GroupingDependsOnTheKernelsAlone) {
  EXPECT_EQ(groupKernelsIntoPrograms(kTinyLlamaKernels),
            groupKernelsIntoPrograms(kTinyLlamaKernels));
  auto two = groupKernelsIntoPrograms(kTinyLlamaKernels, 2);
  EXPECT_EQ(two.size(), 2u);
  auto one = groupKernelsIntoPrograms({"infer_rms_norm<float, float>"});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].size(), 1u);
  auto none = groupKernelsIntoPrograms({});
  ASSERT_EQ(none.size(), 1u); // still one program (the headers' own kernels)
  EXPECT_TRUE(none[0].empty());
}

/// A small program with one template kernel, instantiated by name.
NvrtcJob tinyJob(int scale) {
  NvrtcJob job;
  job.source = "template <int S> __global__ void scaled(float *x) { x[threadIdx.x] *= S + " +
               std::to_string(scale) + "; }\n";
  job.nameExpressions = {"scaled<" + std::to_string(scale) + ">"};
  job.arch = "sm_90a";
  return job;
}

TEST(NvrtcPrograms, ChildProcessesGiveTheBytesOfOneProcess) {
  std::vector<NvrtcJob> jobs = {tinyJob(2), tinyJob(3), tinyJob(5)};
  auto forked = compileInSeparateProcesses(jobs);
  setenv("INFER_NVRTC_PROCESSES", "0", 1);
  auto inProcess = compileInSeparateProcesses(jobs);
  unsetenv("INFER_NVRTC_PROCESSES");
  ASSERT_EQ(forked.size(), jobs.size());
  ASSERT_EQ(inProcess.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(forked[i].ok()) << forked[i].status().message();
    ASSERT_TRUE(inProcess[i].ok()) << inProcess[i].status().message();
    EXPECT_FALSE(forked[i]->cubin.empty());
    EXPECT_EQ(forked[i]->cubin, inProcess[i]->cubin) << "program " << i;
    EXPECT_EQ(forked[i]->ptx, inProcess[i]->ptx) << "program " << i;
    EXPECT_EQ(forked[i]->loweredNames, inProcess[i]->loweredNames);
    EXPECT_EQ(forked[i]->loweredNames.size(), 1u);
  }
}

TEST(NvrtcPrograms, AChildsCompileErrorComesBackWithNvrtcsLog) {
  NvrtcJob broken = tinyJob(7);
  broken.source += "__global__ void broken() { undeclared_name = 1; }\n";
  auto results = compileInSeparateProcesses({tinyJob(2), broken});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok());
  ASSERT_FALSE(results[1].ok());
  EXPECT_NE(results[1].status().message().find("could not compile"), std::string::npos)
      << results[1].status().message();
  EXPECT_NE(results[1].status().message().find("undeclared_name"), std::string::npos)
      << results[1].status().message();
}

} // namespace
