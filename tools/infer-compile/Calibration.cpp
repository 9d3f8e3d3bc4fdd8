//===- Calibration.cpp - infer-compile --calibration FILE -----------------===//

#include "tools/infer-compile/Calibration.h"

#include "runtime/base/FileReader.h"
#include "runtime/tokenizer/Tokenizer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <sstream>

namespace infer::tools {

llvm::Expected<std::vector<std::vector<int64_t>>>
readCalibrationPrompts(const std::string &path, const std::string &tokenizerDir) {
  auto fail = [&](const std::string &message) {
    return llvm::createStringError("--calibration " + path + ": " + message);
  };
  StatusOr<std::string> text = readRegularFile(path, 64ull << 20);
  if (!text.ok())
    return fail(text.status().message());
  llvm::SmallString<256> tokenizerPath(tokenizerDir.empty() ? "." : tokenizerDir);
  llvm::sys::path::append(tokenizerPath, "tokenizer.json");
  auto tokenizer = tokenizer::Tokenizer::fromFile(tokenizerPath.str().str());
  if (!tokenizer.ok())
    return fail("needs the model's tokenizer: " + tokenizer.status().message());
  std::vector<std::vector<int64_t>> prompts;
  std::istringstream lines(*text);
  std::string line;
  for (int number = 1; std::getline(lines, line) && prompts.size() < kMaxCalibrationPrompts;
       ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto ids = (*tokenizer)->encode(line, /*addSpecialTokens=*/true);
    if (!ids.ok())
      return fail("line " + std::to_string(number) + ": " + ids.status().message());
    if (ids->size() > kMaxCalibrationTokens)
      ids->resize(kMaxCalibrationTokens);
    prompts.emplace_back(ids->begin(), ids->end());
  }
  if (prompts.empty())
    return fail("no prompt (one a line)");
  return prompts;
}

} // namespace infer::tools
