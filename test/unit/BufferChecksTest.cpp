//===- BufferChecksTest.cpp - codegen's checks before fusing launches -----===//
//
// codegen/cuda/BufferChecks.h on small hand-built exec programs: a rotary
// (raw qkv -> rotated qkv) before a paged attention, the shape infer_kv_decode
// replaces, and the ways it must refuse to.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/BufferChecks.h"

#include <gtest/gtest.h>

namespace {
namespace art = infer::artifact;
using infer::codegen::buffersApartForEveryT;
using infer::codegen::decodeMayReplaceRotary;
using infer::codegen::readOnlyBy;

/// A buffer at offset (a T + b) of (sizeA T + sizeB) bytes.
uint32_t addBuffer(art::ExecProgram &program, int64_t offsetA, int64_t offsetB, int64_t sizeA,
                   int64_t sizeB = 0) {
  art::Buffer *buffer = program.add_buffers();
  buffer->set_id(uint32_t(program.buffers_size() - 1));
  buffer->mutable_offset()->set_a(offsetA);
  buffer->mutable_offset()->set_b(offsetB);
  buffer->mutable_size()->set_a(sizeA);
  buffer->mutable_size()->set_b(sizeB);
  return buffer->id();
}

art::Launch *addLaunch(art::ExecProgram &program, art::Launch::Kind kind, uint32_t input,
                       uint32_t output) {
  art::Launch *launch = program.add_launches();
  launch->set_kind(kind);
  art::Operand *operand = launch->add_operands();
  operand->set_role("input");
  operand->mutable_ref()->set_buffer(input);
  launch->add_outputs(output);
  return launch;
}

/// Launch 0 rotates raw qkv (buffer 0, [0, 100 T)) into buffer 1
/// ([100 T, 200 T)); launch 1 attends over it into buffer 2 ([200 T, 264 T)).
struct RotaryThenAttention : ::testing::Test {
  art::ExecProgram program;
  uint32_t raw = 0, rotated = 0, attended = 0;
  void SetUp() override {
    program.mutable_arena()->set_bound_tokens(8);
    raw = addBuffer(program, 0, 0, 100);
    rotated = addBuffer(program, 100, 0, 100);
    attended = addBuffer(program, 200, 0, 64);
    addLaunch(program, art::Launch::ROTARY, raw, rotated);
    addLaunch(program, art::Launch::KV_ATTENTION, rotated, attended);
  }
};

TEST_F(RotaryThenAttention, DecodeMayReplaceTheRotary) {
  EXPECT_TRUE(decodeMayReplaceRotary(program, 1));
  EXPECT_TRUE(readOnlyBy(program, rotated, 0, 1));
}

TEST_F(RotaryThenAttention, NotWhenAnotherLaunchReadsTheRotaryOutput) {
  const uint32_t copy = addBuffer(program, 264, 0, 100);
  addLaunch(program, art::Launch::COPY, rotated, copy);
  EXPECT_FALSE(readOnlyBy(program, rotated, 0, 1));
  EXPECT_FALSE(decodeMayReplaceRotary(program, 1));
}

TEST_F(RotaryThenAttention, NotWhenTheRotaryOutputIsAProgramOutput) {
  art::Binding *output = program.add_outputs();
  output->set_name("rotated");
  output->set_buffer(rotated);
  EXPECT_FALSE(decodeMayReplaceRotary(program, 1));
}

TEST_F(RotaryThenAttention, NotWhenTheRawRowsShareBytesWithTheOutputAtSomeStepSize) {
  // The attention's output at a fixed [300, 300 + 64 T): apart from the raw
  // rows [0, 100 T) at T = 1 and 2, overlapping from T = 4 on.
  program.mutable_buffers(int(attended))->mutable_offset()->set_a(0);
  program.mutable_buffers(int(attended))->mutable_offset()->set_b(300);
  EXPECT_FALSE(buffersApartForEveryT(program, raw, attended, 8));
  EXPECT_FALSE(decodeMayReplaceRotary(program, 1));
  EXPECT_TRUE(buffersApartForEveryT(program, raw, attended, 2));
  program.mutable_arena()->set_bound_tokens(2);
  EXPECT_TRUE(decodeMayReplaceRotary(program, 1));
}

TEST_F(RotaryThenAttention, AnInPlaceRotaryIsFine) {
  program.mutable_launches(0)->mutable_operands(0)->mutable_ref()->set_buffer(rotated);
  EXPECT_TRUE(decodeMayReplaceRotary(program, 1));
}

TEST_F(RotaryThenAttention, NotWhenTheRotaryReadsAWeight) {
  program.mutable_launches(0)->mutable_operands(0)->mutable_ref()->set_weight(0);
  EXPECT_FALSE(decodeMayReplaceRotary(program, 1));
}

TEST_F(RotaryThenAttention, OnlyARotaryDirectlyBeforeAPagedAttention) {
  EXPECT_FALSE(decodeMayReplaceRotary(program, 0));
  EXPECT_FALSE(decodeMayReplaceRotary(program, 2));
  program.mutable_launches(0)->set_kind(art::Launch::RMS_NORM);
  EXPECT_FALSE(decodeMayReplaceRotary(program, 1));
}

TEST(BuffersApart, ComparesBothEndsAndRefusesUnknownBuffers) {
  art::ExecProgram program;
  const uint32_t a = addBuffer(program, 0, 0, 10);      // [0, 10 T)
  const uint32_t b = addBuffer(program, 10, 0, 10);     // [10 T, 20 T)
  const uint32_t c = addBuffer(program, 0, 15, 0, 10);  // [15, 25)
  EXPECT_TRUE(buffersApartForEveryT(program, a, b, 8));
  EXPECT_TRUE(buffersApartForEveryT(program, b, a, 8));
  EXPECT_FALSE(buffersApartForEveryT(program, a, c, 8)); // [0, 80) meets [15, 25) at T = 8
  EXPECT_TRUE(buffersApartForEveryT(program, a, c, 1));
  EXPECT_FALSE(buffersApartForEveryT(program, a, a, 1));
  EXPECT_FALSE(buffersApartForEveryT(program, a, 7, 1));
}

TEST(ReadOnlyBy, ProgramInputsAndOutputsCountAsReaders) {
  art::ExecProgram program;
  const uint32_t x = addBuffer(program, 0, 0, 4), y = addBuffer(program, 4, 0, 4);
  addLaunch(program, art::Launch::COPY, x, y);
  EXPECT_TRUE(readOnlyBy(program, x, 0, 0));
  EXPECT_FALSE(readOnlyBy(program, x, 1, 1));
  program.add_inputs()->set_buffer(x);
  EXPECT_FALSE(readOnlyBy(program, x, 0, 0));
}

} // namespace
