//===- ConformanceTest.cpp - ONNX node tests against the interpreter ------===//
//
// Runs ONNX's node conformance suite through the importer and the reference
// interpreter. Every `node/test_*` directory whose model uses only ops in
// `nodeImporters()` (default domain) becomes one GoogleTest test,
// `conformance.<test name>`, registered at startup because the set is only
// known once the data is read. Each test imports model.onnx, feeds
// test_data_set_0/input_N.pb, and compares against output_N.pb with ONNX's
// tolerances. Tests the interpreter cannot express (element types outside
// f32/f16/bf16/i64/bool, non-tensor values) skip with the reason; known failures are
// listed with a reason in excluded.txt and skip with it.
//
// Flags, after GoogleTest's own:
//   --onnx-node-dir=DIR   the `node/` directory (default: the build tree's copy)
//   --excluded=FILE       the exclusion list (default: the source tree's)
//   --run-excluded        run the tests excluded.txt lists instead of skipping
//
//===----------------------------------------------------------------------===//

#include "test/conformance/OnnxTensors.h"

#include "compiler/import/onnx/NodeImporter.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "dialects/graph/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

using namespace infer;
using namespace infer::conformance;

namespace {

struct Options {
  std::string nodeDir = INFER_CONFORMANCE_NODE_DIR;
  std::string excludedFile = INFER_CONFORMANCE_EXCLUDED_FILE;
  bool runExcluded = false;
};

/// One selected ONNX node test.
struct NodeTest {
  std::string name;
  std::string dir;
  /// The reason from excluded.txt; empty when the test is not listed.
  std::string excludedReason;
};

std::string joinPath(llvm::StringRef a, llvm::StringRef b) {
  llvm::SmallString<256> path(a);
  llvm::sys::path::append(path, b);
  return std::string(path);
}

std::optional<onnx::ModelProto> readModel(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  onnx::ModelProto model;
  if (!stream || !model.ParseFromIstream(&stream))
    return std::nullopt;
  return model;
}

/// excluded.txt: `test_name  # reason` per line; blank lines and lines that
/// start with `#` are ignored.
llvm::Expected<llvm::StringMap<std::string>> readExclusions(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read " + path);
  llvm::StringMap<std::string> exclusions;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (auto [number, rawLine] : llvm::enumerate(lines)) {
    llvm::StringRef line = rawLine.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    auto [name, reason] = line.split('#');
    name = name.trim();
    reason = reason.trim();
    if (name.contains(' ') || reason.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     path + ":" + std::to_string(number + 1) +
                                         ": expected `test_name  # reason`");
    exclusions[name] = reason.str();
  }
  return exclusions;
}

/// Whether every node is a default-domain op the importer supports.
bool usesOnlyImportedOps(const onnx::ModelProto &model) {
  const auto &importers = import::nodeImporters();
  return llvm::all_of(model.graph().node(), [&](const onnx::NodeProto &node) {
    return (node.domain().empty() || node.domain() == "ai.onnx") &&
           importers.contains(node.op_type());
  });
}

/// "FLOAT16". The linked libonnx may predate the newest element types, whose
/// names (onnx.proto, ONNX 1.20) are spelled out here.
std::string elementTypeName(int32_t elementType) {
  static constexpr const char *kNewer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                           "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
                                           "FLOAT8E8M0", "UINT2", "INT2"};
  constexpr int32_t kFirstNewer = 17;
  if (onnx::TensorProto_DataType_IsValid(elementType)) {
    std::string name =
        onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elementType));
    if (!name.empty())
      return name;
  }
  if (elementType >= kFirstNewer && elementType < kFirstNewer + int32_t(std::size(kNewer)))
    return kNewer[elementType - kFirstNewer];
  return "ONNX element type " + std::to_string(elementType);
}

/// Why the interpreter cannot run `model` at all, if it cannot: a graph input
/// or output that is not a tensor, or a tensor of an element type outside its
/// domain.
std::optional<std::string> automaticExclusion(mlir::MLIRContext &context,
                                              const onnx::ModelProto &model) {
  auto check = [&](const onnx::ValueInfoProto &value,
                   llvm::StringRef kind) -> std::optional<std::string> {
    const onnx::TypeProto &type = value.type();
    if (!type.has_tensor_type()) {
      llvm::StringRef what = type.has_sequence_type()   ? "a sequence"
                             : type.has_optional_type() ? "an optional"
                             : type.has_map_type()      ? "a map"
                                                        : "not a tensor";
      return (kind + " '" + value.name() + "' is " + what + ", not a tensor").str();
    }
    int32_t elementType = type.tensor_type().elem_type();
    if (!inInterpreterDomain(context, elementType))
      return ("dtype outside the reference interpreter's domain (f32, f16, bf16, i64, bool): " + kind +
              " '" + value.name() + "' is " + elementTypeName(elementType))
          .str();
    return std::nullopt;
  };
  for (const auto &input : model.graph().input())
    if (auto reason = check(input, "input"))
      return reason;
  for (const auto &output : model.graph().output())
    if (auto reason = check(output, "output"))
      return reason;
  return std::nullopt;
}

/// One test_data_set_0 file as an interpreter tensor; errors name the file.
llvm::Expected<interp::Tensor> readTensor(const std::string &path) {
  llvm::Expected<onnx::TensorProto> proto = readTensorProto(path);
  if (!proto)
    return proto.takeError();
  llvm::Expected<interp::Tensor> tensor = tensorFromProto(*proto);
  if (!tensor)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + llvm::toString(tensor.takeError()));
  return tensor;
}

class NodeConformanceTest : public testing::Test {
public:
  NodeConformanceTest(NodeTest test, const Options &options)
      : test(std::move(test)), options(options) {}

  void TestBody() override {
    if (!test.excludedReason.empty() && !options.runExcluded)
      GTEST_SKIP() << "excluded.txt: " << test.excludedReason;

    std::string modelPath = joinPath(test.dir, "model.onnx");
    std::optional<onnx::ModelProto> model = readModel(modelPath);
    ASSERT_TRUE(model) << "cannot parse " << modelPath;

    // One small node per test: a thread pool would cost more than it saves.
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    import::registerImportDialects(context);
    if (std::optional<std::string> reason = automaticExclusion(context, *model))
      GTEST_SKIP() << *reason;

    std::string diagnostics;
    mlir::OwningOpRef<mlir::ModuleOp> module;
    {
      mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
        llvm::raw_string_ostream os(diagnostics);
        os << "\n  " << diag.getLocation() << ": " << diag;
        for (const mlir::Diagnostic &note : diag.getNotes())
          os << "\n    note: " << note;
        return mlir::success();
      });
      module = import::importOnnxFile(context, modelPath);
    }
    ASSERT_TRUE(module) << "import failed:" << diagnostics;
    auto funcs = module->getOps<mlir::func::FuncOp>();
    ASSERT_FALSE(funcs.empty()) << "the imported module has no func.func";
    mlir::func::FuncOp func = *funcs.begin();

    // test_data_set_0/input_N.pb holds the N-th graph input that is not an
    // initializer; the function's arguments name theirs.
    std::vector<const onnx::ValueInfoProto *> graphInputs;
    for (const auto &input : model->graph().input())
      if (llvm::none_of(model->graph().initializer(),
                        [&](const onnx::TensorProto &init) { return init.name() == input.name(); }))
        graphInputs.push_back(&input);
    std::string dataDir = joinPath(test.dir, "test_data_set_0");
    std::vector<interp::Tensor> inputs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "graph.name");
      ASSERT_TRUE(name) << "argument " << i << " has no graph.name";
      auto index = std::find_if(graphInputs.begin(), graphInputs.end(),
                                [&](auto *input) { return input->name() == name.getValue(); });
      ASSERT_NE(index, graphInputs.end()) << "argument '" << name.str() << "' is no graph input";
      std::string path =
          joinPath(dataDir, "input_" + std::to_string(index - graphInputs.begin()) + ".pb");
      llvm::Expected<interp::Tensor> input = readTensor(path);
      ASSERT_TRUE(static_cast<bool>(input)) << llvm::toString(input.takeError());
      inputs.push_back(std::move(*input));
    }

    llvm::Expected<std::vector<interp::Tensor>> results = interp::runFunction(func, inputs);
    ASSERT_TRUE(static_cast<bool>(results))
        << "interpreter: " << llvm::toString(results.takeError());
    ASSERT_EQ(results->size(), static_cast<size_t>(model->graph().output_size()))
        << "result count";
    for (auto [i, got] : llvm::enumerate(*results)) {
      const std::string &name = model->graph().output(static_cast<int>(i)).name();
      llvm::Expected<interp::Tensor> want =
          readTensor(joinPath(dataDir, "output_" + std::to_string(i) + ".pb"));
      ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
      std::string difference = compareTensors(got, *want);
      EXPECT_TRUE(difference.empty()) << "output " << i << " '" << name << "': " << difference;
    }
  }

private:
  NodeTest test;
  const Options &options;
};

/// Fails when excluded.txt names a test the suite does not select, so the list
/// cannot silently rot when the importer or the data changes.
class ExclusionListTest : public testing::Test {
public:
  explicit ExclusionListTest(std::vector<std::string> unknown) : unknown(std::move(unknown)) {}
  void TestBody() override {
    for (const std::string &name : unknown)
      ADD_FAILURE() << "excluded.txt lists '" << name << "', which is not a selected test";
  }

private:
  std::vector<std::string> unknown;
};

constexpr llvm::StringLiteral kSuite = "conformance";
constexpr llvm::StringLiteral kMetaSuite = "conformance_meta";

/// The ONNX test names an exact --gtest_filter asks for ("conformance.test_a:
/// conformance.test_b", as ctest runs one test per process), so that only
/// those models are read; nullopt for patterns, negations, and filters naming
/// the meta test, which needs the whole selection.
std::optional<std::vector<std::string>> exactlyFilteredTests() {
  std::string filter = GTEST_FLAG_GET(filter);
  if (filter.find_first_of("*?-") != std::string::npos)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> patterns;
  llvm::StringRef(filter).split(patterns, ':', -1, /*KeepEmpty=*/false);
  std::vector<std::string> names;
  for (llvm::StringRef pattern : patterns) {
    auto [suite, name] = pattern.split('.');
    if (suite != kSuite)
      return std::nullopt;
    names.push_back(name.str());
  }
  return names;
}

/// Registers one test per selected directory, in name order.
llvm::Error registerTests(const Options &options) {
  llvm::Expected<llvm::StringMap<std::string>> exclusions = readExclusions(options.excludedFile);
  if (!exclusions)
    return exclusions.takeError();

  std::optional<std::vector<std::string>> filtered = exactlyFilteredTests();
  std::vector<std::string> names;
  std::error_code error;
  if (filtered) {
    names = *filtered;
  } else {
    for (llvm::sys::fs::directory_iterator it(options.nodeDir, error), end; it != end && !error;
         it.increment(error)) {
      llvm::StringRef name = llvm::sys::path::filename(it->path());
      if (name.starts_with("test_"))
        names.push_back(name.str());
    }
    if (error || names.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no ONNX node tests under " + options.nodeDir);
  }
  std::sort(names.begin(), names.end());

  llvm::StringMap<bool> selected;
  for (const std::string &name : names) {
    std::string dir = joinPath(options.nodeDir, name);
    std::optional<onnx::ModelProto> model = readModel(joinPath(dir, "model.onnx"));
    if (!model || !usesOnlyImportedOps(*model))
      continue;
    selected[name] = true;
    NodeTest test{name, dir, exclusions->lookup(name)};
    testing::RegisterTest(kSuite.data(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [test, &options]() -> testing::Test * {
                            return new NodeConformanceTest(test, options);
                          });
  }

  if (filtered)
    return llvm::Error::success();
  std::vector<std::string> unknown;
  for (const auto &entry : *exclusions)
    if (!selected.contains(entry.getKey()))
      unknown.push_back(entry.getKey().str());
  std::sort(unknown.begin(), unknown.end());
  testing::RegisterTest(kMetaSuite.data(), "excluded_list_names_selected_tests", nullptr, nullptr,
                        __FILE__, __LINE__, [unknown]() -> testing::Test * {
                          return new ExclusionListTest(unknown);
                        });
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  static Options options;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.consume_front("--onnx-node-dir=")) {
      options.nodeDir = arg.str();
    } else if (arg.consume_front("--excluded=")) {
      options.excludedFile = arg.str();
    } else if (arg == "--run-excluded") {
      options.runExcluded = true;
    } else {
      llvm::errs() << "infer-conformance-tests: unknown argument '" << arg << "'\n";
      return 2;
    }
  }
  if (llvm::Error error = registerTests(options)) {
    llvm::errs() << "infer-conformance-tests: " << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  return RUN_ALL_TESTS();
}
