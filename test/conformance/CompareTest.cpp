//===- CompareTest.cpp - the conformance runner's own checks --------------===//
//
// The comparison and TensorProto decoding every conformance test relies on
// must be able to fail: these cases pin ONNX's tolerance rule and the
// mismatches it has to catch.
//
//===----------------------------------------------------------------------===//

#include "test/conformance/OnnxTensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace infer::conformance;
using infer::interp::DType;
using infer::interp::Tensor;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(conformance_meta, floats_within_onnx_tolerance_match) {
  // |got - want| <= 1e-7 + 1e-3 * |want|.
  EXPECT_EQ(compareTensors(Tensor::fromF32({2}, {1000.9f, 0.0f}), Tensor::fromF32({2}, {1000.0f, 0.0f})),
            "");
  EXPECT_EQ(compareTensors(Tensor::fromF32({1}, {5e-8f}), Tensor::fromF32({1}, {0.0f})), "");
}

TEST(conformance_meta, floats_outside_tolerance_differ) {
  std::string diff =
      compareTensors(Tensor::fromF32({2}, {1.0f, 1001.5f}), Tensor::fromF32({2}, {1.0f, 1000.0f}));
  EXPECT_NE(diff.find("1 of 2 elements differ"), std::string::npos) << diff;
  EXPECT_NE(diff.find("at flat index 1"), std::string::npos) << diff;
  EXPECT_NE(compareTensors(Tensor::fromF32({1}, {2e-7f}), Tensor::fromF32({1}, {0.0f})), "");
}

TEST(conformance_meta, nan_matches_only_nan_and_inf_only_itself) {
  EXPECT_EQ(compareTensors(Tensor::fromF32({2}, {kNaN, kInf}), Tensor::fromF32({2}, {kNaN, kInf})),
            "");
  EXPECT_NE(compareTensors(Tensor::fromF32({1}, {0.0f}), Tensor::fromF32({1}, {kNaN})), "");
  EXPECT_NE(compareTensors(Tensor::fromF32({1}, {kNaN}), Tensor::fromF32({1}, {0.0f})), "");
  EXPECT_NE(compareTensors(Tensor::fromF32({1}, {-kInf}), Tensor::fromF32({1}, {kInf})), "");
  EXPECT_NE(compareTensors(Tensor::fromF32({1}, {3e38f}), Tensor::fromF32({1}, {kInf})), "");
}

TEST(conformance_meta, ints_and_bools_must_be_exact) {
  EXPECT_EQ(compareTensors(Tensor::fromI64({2}, {7, -1}), Tensor::fromI64({2}, {7, -1})), "");
  EXPECT_NE(compareTensors(Tensor::fromI64({1}, {1000001}), Tensor::fromI64({1}, {1000000})), "");
  EXPECT_NE(compareTensors(Tensor::fromBool({1}, {1}), Tensor::fromBool({1}, {0})), "");
}

TEST(conformance_meta, shape_and_dtype_must_match) {
  EXPECT_NE(compareTensors(Tensor::fromF32({2, 1}, {1, 2}), Tensor::fromF32({2}, {1, 2})), "");
  EXPECT_NE(compareTensors(Tensor::fromF32({}, {1}), Tensor::fromF32({1}, {1})), "");
  EXPECT_NE(compareTensors(Tensor::fromI64({1}, {1}), Tensor::fromF32({1}, {1})), "");
}

TEST(conformance_meta, tensor_protos_decode_typed_and_raw_data) {
  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::INT32);
  typed.add_dims(2);
  typed.add_int32_data(-3);
  typed.add_int32_data(4);
  llvm::Expected<Tensor> ints = tensorFromProto(typed);
  ASSERT_TRUE(static_cast<bool>(ints)) << llvm::toString(ints.takeError());
  EXPECT_EQ(ints->dtype(), DType::I64);
  EXPECT_EQ(compareTensors(*ints, Tensor::fromI64({2}, {-3, 4})), "");

  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::DOUBLE);
  raw.add_dims(1);
  double value = 0.25;
  raw.set_raw_data(std::string(reinterpret_cast<const char *>(&value), sizeof(value)));
  llvm::Expected<Tensor> doubles = tensorFromProto(raw);
  ASSERT_TRUE(static_cast<bool>(doubles)) << llvm::toString(doubles.takeError());
  EXPECT_EQ(compareTensors(*doubles, Tensor::fromF32({1}, {0.25f})), "");
}

TEST(conformance_meta, bad_tensor_protos_are_errors) {
  onnx::TensorProto shortRaw;
  shortRaw.set_data_type(onnx::TensorProto::FLOAT);
  shortRaw.add_dims(2);
  shortRaw.set_raw_data(std::string(4, '\0'));
  llvm::Expected<Tensor> tensor = tensorFromProto(shortRaw);
  ASSERT_FALSE(static_cast<bool>(tensor));
  EXPECT_NE(llvm::toString(tensor.takeError()).find("raw_data has 4 bytes, expected 8"),
            std::string::npos);

  onnx::TensorProto int8;
  int8.set_data_type(onnx::TensorProto::INT8);
  tensor = tensorFromProto(int8);
  ASSERT_FALSE(static_cast<bool>(tensor));
  EXPECT_NE(llvm::toString(tensor.takeError()).find("which the interpreter does not hold"),
            std::string::npos);

  // 16-bit floats are 2 bytes each in raw_data.
  onnx::TensorProto shortHalf;
  shortHalf.set_data_type(onnx::TensorProto::FLOAT16);
  shortHalf.add_dims(2);
  shortHalf.set_raw_data(std::string(3, '\0'));
  tensor = tensorFromProto(shortHalf);
  ASSERT_FALSE(static_cast<bool>(tensor));
  EXPECT_NE(llvm::toString(tensor.takeError()).find("raw_data has 3 bytes, expected 4"),
            std::string::npos);
}

TEST(conformance_meta, half_precision_protos_decode_to_f32) {
  // FLOAT16 typed: one bit pattern per int32_data entry. 0x3C00 = 1,
  // 0x0001 = 2^-24 (smallest subnormal), 0xFC00 = -inf.
  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::FLOAT16);
  typed.add_dims(3);
  for (int32_t bits : {0x3C00, 0x0001, 0xFC00})
    typed.add_int32_data(bits);
  llvm::Expected<Tensor> halves = tensorFromProto(typed);
  ASSERT_TRUE(static_cast<bool>(halves)) << llvm::toString(halves.takeError());
  EXPECT_EQ(halves->dtype(), DType::F32);
  EXPECT_EQ(halves->f32()[1], std::ldexp(1.0f, -24));
  EXPECT_EQ(compareTensors(*halves, Tensor::fromF32({3}, {1.0f, std::ldexp(1.0f, -24), -kInf})),
            "");

  // BFLOAT16 raw, little-endian: 0x3F81 = 1 + 2^-7, 0xC040 = -3.
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::BFLOAT16);
  raw.add_dims(2);
  raw.set_raw_data(std::string("\x81\x3F\x40\xC0", 4));
  llvm::Expected<Tensor> brains = tensorFromProto(raw);
  ASSERT_TRUE(static_cast<bool>(brains)) << llvm::toString(brains.takeError());
  EXPECT_EQ(brains->f32()[0], 1.0078125f);
  EXPECT_EQ(brains->f32()[1], -3.0f);
}

} // namespace
