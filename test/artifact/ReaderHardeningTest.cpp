//===- ReaderHardeningTest.cpp - an artifact that changes while in use ----===//
//
// The reader reads with pread, never through a mapping, and the backends copy
// the weights at load (docs/trust-model.md, "Runtime"): a file truncated
// after open is a read error naming it (it was SIGBUS), a file written in
// place after open is detected when the backend has loaded (it was silently
// mixed weights), and a new file renamed over the path leaves the open
// reader's file as it was.
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/ArtifactWriter.h"
#include "runtime/artifact/ArtifactReader.h"
#include "runtime/cpu/CpuBackend.h"
#include "test/artifact/TestModule.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

using namespace mlir;
namespace art = infer::artifact;

namespace {

class ReaderHardening : public ::testing::Test {
protected:
  void SetUp() override {
    OwningOpRef<ModuleOp> module = infer::test::optimizedTestModel(context);
    ASSERT_TRUE(module);
    OwningOpRef<ModuleOp> lowered = infer::test::lowerToExec(*module, 64);
    ASSERT_TRUE(lowered);
    auto programs = lowered->getOps<infer::exec::ProgramOp>();
    ASSERT_FALSE(programs.empty());
    path = ::testing::TempDir() + "/infer-reader-" + std::to_string(::getpid()) + ".infer";
    infer::compiler::ArtifactOptions options;
    options.modelName = "tiny-llama";
    options.target = art::TARGET_CPU;
    ASSERT_TRUE(
        succeeded(infer::compiler::writeArtifact(*module, path, options, *programs.begin())));
    auto opened = art::ArtifactReader::open(path);
    ASSERT_TRUE(opened.ok()) << opened.status().toString();
    reader = std::move(*opened);
    // File times tick with the kernel's clock (a few ms): a change made at
    // once could keep the time the file had.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  void TearDown() override { ::unlink(path.c_str()); }

  MLIRContext context;
  std::string path;
  std::unique_ptr<art::ArtifactReader> reader;
};

TEST_F(ReaderHardening, TruncatedAfterOpenIsAReadErrorNotSigbus) {
  ASSERT_GT(reader->numWeights(), 0u);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(reader->fileSize() / 2)), 0);
  auto backend = infer::cpu::CpuBackend::create(*reader);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), infer::StatusCode::kDataLoss);
  EXPECT_NE(backend.status().message().find("'" + path + "' ended at byte "), std::string::npos)
      << backend.status().message();
  EXPECT_NE(backend.status().message().find("(truncated while in use?)"), std::string::npos);
  auto weight = reader->weight(reader->numWeights() - 1);
  ASSERT_FALSE(weight.ok());
  EXPECT_EQ(weight.status().code(), infer::StatusCode::kDataLoss);
}

TEST_F(ReaderHardening, WrittenInPlaceAfterOpenIsDetectedAtLoad) {
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(reader->fileSize() - 1));
    file.put('\x7f');
  }
  auto backend = infer::cpu::CpuBackend::create(*reader);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().message(),
            "'" + path +
                "' changed while in use: it was modified after it was opened (replace a "
                "file by renaming a new one over it)");
  EXPECT_FALSE(reader->checkUnchanged().ok());
}

TEST_F(ReaderHardening, RenamedOverKeepsTheOpenFile) {
  std::string other = path + ".new";
  {
    std::ofstream file(other, std::ios::binary);
    file << "not an artifact";
  }
  ASSERT_EQ(std::rename(other.c_str(), path.c_str()), 0);
  auto backend = infer::cpu::CpuBackend::create(*reader);
  EXPECT_TRUE(backend.ok()) << backend.status().toString();
  EXPECT_TRUE(reader->checkUnchanged().ok());
}

} // namespace
