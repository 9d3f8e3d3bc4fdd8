//===- BufferChecksTest.cpp - codegen's questions about buffers -----------===//
//
// codegen/cuda/BufferChecks.h on small hand-built exec programs: whether a
// launch may change a buffer in place unseen (the FP8 KV cache's rounding of
// K and V before the forward's attention). The fusion rules that used to be
// checked here are the exec passes' now (test/Transforms/fold-*.mlir).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/BufferChecks.h"

#include <gtest/gtest.h>

namespace {
namespace art = infer::artifact;
using infer::codegen::unreadAfter;

uint32_t addBuffer(art::ExecProgram &program) {
  art::Buffer *buffer = program.add_buffers();
  buffer->set_id(uint32_t(program.buffers_size() - 1));
  return buffer->id();
}

art::Launch *addLaunch(art::ExecProgram &program, art::Launch::Kind kind, uint32_t input,
                       uint32_t output) {
  art::Launch *launch = program.add_launches();
  launch->set_kind(kind);
  art::Operand *operand = launch->add_operands();
  operand->set_role(art::ROLE_INPUT);
  operand->mutable_ref()->set_buffer(input);
  launch->add_outputs(output);
  return launch;
}

/// Launch 0 writes k from x; launch 1 (an attention) reads k into o.
struct AttentionReadsK : ::testing::Test {
  art::ExecProgram program;
  uint32_t x = 0, k = 0, o = 0;
  void SetUp() override {
    x = addBuffer(program), k = addBuffer(program), o = addBuffer(program);
    addLaunch(program, art::Launch::GEMM, x, k);
    addLaunch(program, art::Launch::ATTENTION, k, o);
  }
};

TEST_F(AttentionReadsK, UnreadAfterItsLastReader) {
  EXPECT_TRUE(unreadAfter(program, k, 1));
  EXPECT_FALSE(unreadAfter(program, k, 0)); // the attention reads it after launch 0
}

TEST_F(AttentionReadsK, NotWhenALaterLaunchReadsIt) {
  const uint32_t copy = addBuffer(program);
  addLaunch(program, art::Launch::COPY, k, copy);
  EXPECT_FALSE(unreadAfter(program, k, 1));
  EXPECT_TRUE(unreadAfter(program, k, 2));
}

TEST_F(AttentionReadsK, NotWhenAProgramOutputReadsIt) {
  art::Binding *output = program.add_outputs();
  output->set_name("k");
  output->set_buffer(k);
  EXPECT_FALSE(unreadAfter(program, k, 1));
  EXPECT_TRUE(unreadAfter(program, o, 1));
}

} // namespace
