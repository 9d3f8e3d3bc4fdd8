//===- Diagnostics.cpp - command-line rendering of MLIR diagnostics -------===//

#include "tools/infer-compile/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using infer::tools::CommandLineDiagnostics;

namespace {

/// "file:line:col", "file" (line 0: the whole file), or "node 'name'".
std::string describe(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string text = file.getFilename().str();
    if (file.getLine() != 0)
      text += ":" + std::to_string(file.getLine()) + ":" + std::to_string(file.getColumn());
    return text;
  }
  if (auto name = dyn_cast<NameLoc>(loc))
    return "node '" + name.getName().str() + "'";
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    return describe(fused.getLocations().front());
  return "";
}

StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error: return "error";
  case DiagnosticSeverity::Warning: return "warning";
  case DiagnosticSeverity::Note: return "note";
  case DiagnosticSeverity::Remark: return "remark";
  }
  return "error";
}

void print(Location loc, DiagnosticSeverity severity, const std::string &message) {
  std::string where = describe(loc);
  // Importer messages already start with the node they are about.
  if (!where.empty() && !StringRef(message).starts_with(where))
    llvm::errs() << where << ": ";
  llvm::errs() << severityName(severity) << ": " << message << "\n";
}

} // namespace

CommandLineDiagnostics::CommandLineDiagnostics(MLIRContext &context) : context(context) {
  handler = context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    print(diag.getLocation(), diag.getSeverity(), diag.str());
    for (Diagnostic &note : diag.getNotes())
      print(note.getLocation(), note.getSeverity(), note.str());
    return success();
  });
}

CommandLineDiagnostics::~CommandLineDiagnostics() {
  context.getDiagEngine().eraseHandler(handler);
}
