//===- GemmTuningCache.cpp - cuBLASLt algorithms kept across processes ----===//

#include "runtime/cuda/GemmTuningCache.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace infer::cuda {
namespace {

constexpr int kFormat = 1;

std::string toHex(const GemmAlgorithmBytes &algorithm) {
  std::string text;
  char word[17];
  for (uint64_t value : algorithm) {
    std::snprintf(word, sizeof word, "%016llx", static_cast<unsigned long long>(value));
    text += word;
  }
  return text;
}

std::optional<GemmAlgorithmBytes> fromHex(const std::string &text) {
  GemmAlgorithmBytes algorithm{};
  if (text.size() != 16 * algorithm.size())
    return std::nullopt;
  for (size_t i = 0; i < algorithm.size(); ++i) {
    const char *first = text.data() + i * 16, *last = first + 16;
    auto [end, error] = std::from_chars(first, last, algorithm[i], 16);
    if (error != std::errc() || end != last)
      return std::nullopt;
  }
  return algorithm;
}

/// The whole file as JSON; an empty object when it is missing or malformed.
nlohmann::json readFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return nlohmann::json::object();
  nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  // Checked before read: a value of another type would throw.
  if (!json.is_object() || !json.contains("format") || !json["format"].is_number_integer() ||
      json["format"] != kFormat || !json.contains("devices") || !json["devices"].is_object())
    return nlohmann::json::object();
  return json;
}

/// The entries `json` holds for `deviceKey` whose algorithms parse.
std::map<std::string, GemmAlgorithmBytes> entriesOf(const nlohmann::json &json,
                                                    const std::string &deviceKey) {
  std::map<std::string, GemmAlgorithmBytes> entries;
  if (!json.contains("devices") || !json["devices"].contains(deviceKey))
    return entries;
  const nlohmann::json &device = json["devices"][deviceKey];
  if (!device.is_object())
    return entries;
  for (const auto &[shape, value] : device.items())
    if (value.is_string())
      if (std::optional<GemmAlgorithmBytes> algorithm = fromHex(value.get<std::string>()))
        entries[shape] = *algorithm;
  return entries;
}

} // namespace

std::optional<std::string> GemmTuningCache::pathFor(const char *cacheDir, const char *xdgCacheHome,
                                                    const char *home) {
  auto set = [](const char *value) { return value && *value; };
  std::filesystem::path dir;
  if (set(cacheDir))
    dir = cacheDir;
  else if (set(xdgCacheHome))
    dir = std::filesystem::path(xdgCacheHome) / "infer";
  else if (set(home))
    dir = std::filesystem::path(home) / ".cache" / "infer";
  else
    return std::nullopt;
  return (dir / "gemm-tuning.json").string();
}

GemmTuningCache::GemmTuningCache(std::string path, std::string deviceKey)
    : path_(std::move(path)), deviceKey_(std::move(deviceKey)),
      entries_(entriesOf(readFile(path_), deviceKey_)) {}

std::optional<GemmAlgorithmBytes> GemmTuningCache::find(const std::string &shapeKey) const {
  auto found = entries_.find(shapeKey);
  if (found == entries_.end())
    return std::nullopt;
  return found->second;
}

Status GemmTuningCache::remember(const std::string &shapeKey,
                                 const GemmAlgorithmBytes &algorithm) {
  entries_.emplace(shapeKey, algorithm);
  // What other processes wrote since this one read the file wins.
  nlohmann::json json = readFile(path_);
  for (const auto &[shape, kept] : entriesOf(json, deviceKey_))
    entries_[shape] = kept;
  json["format"] = kFormat;
  nlohmann::json &device = json["devices"][deviceKey_];
  for (const auto &[shape, kept] : entries_)
    device[shape] = toHex(kept);
  std::error_code error;
  const std::filesystem::path target(path_);
  std::filesystem::create_directories(target.parent_path(), error);
  if (error)
    return internalError("cannot create " + target.parent_path().string() + ": " +
                         error.message());
  const std::string temporary = path_ + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << json.dump(1) << '\n';
    if (!out.flush())
      return internalError("cannot write " + temporary + ": " + std::strerror(errno));
  }
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return internalError("cannot write " + path_ + ": " + error.message());
  }
  return okStatus();
}

} // namespace infer::cuda
