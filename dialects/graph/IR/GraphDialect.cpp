//===- GraphDialect.cpp - graph dialect registration and resources --------===//

#include "dialects/graph/IR/GraphDialect.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/IR/GraphResources.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <mutex>

using namespace mlir;
using namespace infer::graph;

#include "dialects/graph/IR/GraphOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/graph/IR/GraphAttrs.cpp.inc"

namespace {

using WeightBlobManager = ResourceBlobManagerDialectInterfaceBase<WeightHandle>;

/// Remembers which blobs are file ranges so that they print as references.
class FileRangeRegistry {
public:
  void record(StringRef key, FileRange range) {
    std::lock_guard<std::mutex> lock(mutex);
    ranges[key] = std::move(range);
  }
  std::optional<FileRange> lookup(StringRef key) const {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = ranges.find(key);
    if (it == ranges.end())
      return std::nullopt;
    return it->second;
  }
  std::vector<std::string> files() const {
    std::lock_guard<std::mutex> lock(mutex);
    llvm::SetVector<StringRef> paths;
    for (const auto &entry : ranges)
      paths.insert(entry.second.file->path());
    return std::vector<std::string>(paths.begin(), paths.end());
  }

private:
  mutable std::mutex mutex;
  llvm::StringMap<FileRange> ranges;
};

/// The dialect interface that owns the blob manager and the file registry.
struct GraphWeightStorage : public WeightBlobManager {
  using WeightBlobManager::WeightBlobManager;
  FileRangeRegistry fileRanges;
  /// Where parsed "file:" references must lie (setWeightFileDirectory).
  std::optional<std::string> referenceDirectory;
};

constexpr StringLiteral kFilePrefix = "file:";

struct GraphOpAsmInterface : public OpAsmDialectInterface {
  GraphOpAsmInterface(Dialect *dialect, GraphWeightStorage &storage)
      : OpAsmDialectInterface(dialect), storage(storage) {}

  std::string getResourceKey(const AsmDialectResourceHandle &handle) const override {
    return cast<WeightHandle>(handle).getKey().str();
  }
  FailureOr<AsmDialectResourceHandle> declareResource(StringRef key) const override {
    return storage.insert(key);
  }
  LogicalResult parseResource(AsmParsedResourceEntry &entry) const override {
    if (entry.getKind() == AsmResourceEntryKind::String) {
      FailureOr<std::string> text = entry.parseAsString();
      if (failed(text))
        return failure();
      std::optional<StringRef> directory;
      if (storage.referenceDirectory)
        directory = *storage.referenceDirectory;
      llvm::Expected<FileRange> range = parseFileReference(*text, directory);
      if (!range)
        return entry.emitError() << llvm::toString(range.takeError());
      const char *begin = range->file->data() + range->offset;
      std::shared_ptr<MappedFile> keepAlive = range->file;
      storage.update(entry.getKey(),
                     AsmResourceBlob(ArrayRef<char>(begin, range->size), /*align=*/1,
                                     [keepAlive](void *, size_t, size_t) {},
                                     /*dataIsMutable=*/false));
      storage.fileRanges.record(entry.getKey(), *range);
      return success();
    }
    FailureOr<AsmResourceBlob> blob = entry.parseAsBlob();
    if (failed(blob))
      return failure();
    storage.update(entry.getKey(), std::move(*blob));
    return success();
  }
  void buildResources(Operation *, const SetVector<AsmDialectResourceHandle> &referenced,
                      AsmResourceBuilder &builder) const override {
    for (const AsmDialectResourceHandle &handle : referenced.getArrayRef()) {
      const auto *weight = dyn_cast<WeightHandle>(&handle);
      if (!weight)
        continue;
      StringRef key = weight->getKey();
      if (std::optional<FileRange> range = storage.fileRanges.lookup(key)) {
        builder.buildString(key, (kFilePrefix + range->file->path() + ":" +
                                  Twine(range->offset) + ":" + Twine(range->size))
                                     .str());
      } else if (const AsmResourceBlob *blob = weight->getBlob()) {
        builder.buildBlob(key, *blob);
      }
    }
  }

private:
  GraphWeightStorage &storage;
};

/// Resource keys must be MLIR identifiers ([A-Za-z_][A-Za-z0-9_$.]*) to print
/// and parse back; ONNX names such as "onnx::MatMul_12" or "/model/w" are not.
std::string sanitizeKey(StringRef name) {
  std::string key;
  for (char c : name)
    key += (llvm::isAlnum(c) || c == '_' || c == '$' || c == '.') ? c : '_';
  if (key.empty() || !(llvm::isAlpha(key[0]) || key[0] == '_'))
    key.insert(key.begin(), '_');
  return key;
}

GraphWeightStorage &getStorage(MLIRContext *context) {
  auto *dialect = context->getOrLoadDialect<GraphDialect>();
  return *dialect->getRegisteredInterface<GraphWeightStorage>();
}

} // namespace

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/graph/IR/GraphOps.cpp.inc"
      >();
  registerAttributes();
  auto &storage = addInterface<GraphWeightStorage>();
  addInterface<GraphOpAsmInterface>(storage);
}

void GraphDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/graph/IR/GraphAttrs.cpp.inc"
      >();
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

ArrayRef<char> WeightAttr::getData() const {
  if (const AsmResourceBlob *blob = getHandle().getBlob())
    return blob->getData();
  return {};
}

//===----------------------------------------------------------------------===//
// Resources
//===----------------------------------------------------------------------===//

WeightHandle infer::graph::insertFileWeight(MLIRContext *context, StringRef name,
                                            FileRange range) {
  GraphWeightStorage &storage = getStorage(context);
  const char *begin = range.file->data() + range.offset;
  std::shared_ptr<MappedFile> keepAlive = range.file;
  WeightHandle handle = storage.insert(
      sanitizeKey(name), AsmResourceBlob(ArrayRef<char>(begin, range.size), /*align=*/1,
                            [keepAlive](void *, size_t, size_t) {},
                            /*dataIsMutable=*/false));
  storage.fileRanges.record(handle.getKey(), std::move(range));
  return handle;
}

void infer::graph::setWeightFileDirectory(MLIRContext *context,
                                          std::optional<std::string> directory) {
  getStorage(context).referenceDirectory = std::move(directory);
}

std::vector<std::string> infer::graph::weightFiles(MLIRContext *context) {
  return getStorage(context).fileRanges.files();
}

WeightHandle infer::graph::insertOwnedWeight(MLIRContext *context, StringRef name,
                                             std::unique_ptr<char[]> bytes, size_t size) {
  GraphWeightStorage &storage = getStorage(context);
  char *data = bytes.release();
  return storage.insert(
      sanitizeKey(name), AsmResourceBlob(ArrayRef<char>(data, size), /*align=*/1,
                            [](void *ptr, size_t, size_t) { delete[] static_cast<char *>(ptr); },
                            /*dataIsMutable=*/false));
}

WeightHandle infer::graph::insertWeightBlob(MLIRContext *context, StringRef name,
                                            AsmResourceBlob blob) {
  return getStorage(context).insert(sanitizeKey(name), std::move(blob));
}
