//===- TuningDatabase.cpp - tuning records kept across compiles -----------===//

#include "codegen/cuda/TuningDatabase.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace infer::codegen {
namespace art = artifact;
namespace {

constexpr int kFormat = 2;

std::string toHex(const std::string &bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (unsigned char byte : bytes) {
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

std::optional<std::string> fromHex(const std::string &text) {
  if (text.size() != 128)
    return std::nullopt;
  std::string bytes;
  for (size_t i = 0; i < text.size(); i += 2) {
    auto digit = [](char c) -> int {
      return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    int high = digit(text[i]), low = digit(text[i + 1]);
    if (high < 0 || low < 0)
      return std::nullopt;
    bytes += char(high * 16 + low);
  }
  return bytes;
}

std::optional<art::ElementType> typeNamed(const std::string &name) {
  for (art::ElementType type :
       {art::ELEMENT_TYPE_F32, art::ELEMENT_TYPE_BF16, art::ELEMENT_TYPE_F16})
    if (name == art::elementTypeName(type))
      return type;
  return std::nullopt;
}

nlohmann::json toJson(const art::GemmTuningRecord &record) {
  return {{"type", art::elementTypeName(record.element_type())},
          {"k", record.k()},
          {"n", record.n()},
          {"tokens", record.tokens()},
          {"transposed", record.transposed()},
          {"bias", record.bias()},
          {"residual", record.residual()},
          {"algorithm", toHex(record.algorithm())},
          {"tuned_us", record.tuned_us()},
          {"heuristic_us", record.heuristic_us()},
          {"candidates", record.candidates()}};
}

/// The record `json` holds, or why it is not one.
StatusOr<art::GemmTuningRecord> recordFrom(const nlohmann::json &json) {
  auto wrong = [](const std::string &why) { return invalidArgumentError(why); };
  if (!json.is_object())
    return wrong("a GEMM record is not an object");
  for (const char *key : {"k", "n", "tokens", "candidates"})
    if (!json.contains(key) || !json[key].is_number_integer())
      return wrong(std::string("a GEMM record's \"") + key + "\" is not an integer");
  for (const char *key : {"transposed", "bias", "residual"})
    if (!json.contains(key) || !json[key].is_boolean())
      return wrong(std::string("a GEMM record's \"") + key + "\" is not true or false");
  for (const char *key : {"tuned_us", "heuristic_us"})
    if (!json.contains(key) || !json[key].is_number())
      return wrong(std::string("a GEMM record's \"") + key + "\" is not a number");
  for (const char *key : {"type", "algorithm"})
    if (!json.contains(key) || !json[key].is_string())
      return wrong(std::string("a GEMM record's \"") + key + "\" is not a string");
  std::optional<art::ElementType> type = typeNamed(json["type"].get<std::string>());
  if (!type)
    return wrong("a GEMM record's type is not f32, bf16 or f16");
  std::optional<std::string> algorithm = fromHex(json["algorithm"].get<std::string>());
  if (!algorithm)
    return wrong("a GEMM record's algorithm is not 128 hex digits");
  art::GemmTuningRecord record;
  record.set_element_type(*type);
  record.set_k(json["k"].get<int64_t>());
  record.set_n(json["n"].get<int64_t>());
  record.set_tokens(json["tokens"].get<int64_t>());
  record.set_transposed(json["transposed"].get<bool>());
  record.set_bias(json["bias"].get<bool>());
  record.set_residual(json["residual"].get<bool>());
  record.set_algorithm(*algorithm);
  record.set_tuned_us(json["tuned_us"].get<double>());
  record.set_heuristic_us(json["heuristic_us"].get<double>());
  record.set_candidates(json["candidates"].get<int32_t>());
  return record;
}

} // namespace

StatusOr<TuningDatabase::Sets> TuningDatabase::read(const std::string &path) {
  Sets sets;
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    return sets;
  if (!std::filesystem::is_regular_file(path, error))
    return invalidArgumentError("tuning database " + path + " is not a regular file");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in)
    return invalidArgumentError("cannot read tuning database " + path);
  auto bad = [&](const std::string &why) {
    return invalidArgumentError("tuning database " + path + ": " + why +
                                " (a file written by `infer-compile --tune --tuning-db`)");
  };
  nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return bad("not JSON");
  if (!json.is_object() || !json.contains("format") || !json["format"].is_number_integer() ||
      json["format"].get<int64_t>() != kFormat)
    return bad("no \"format\": " + std::to_string(kFormat));
  if (!json.contains("record_sets") || !json["record_sets"].is_array())
    return bad("no \"record_sets\" list");
  for (const nlohmann::json &set : json["record_sets"]) {
    if (!set.is_object() || !set.contains("device") || !set["device"].is_string() ||
        !set.contains("cublaslt_version") || !set["cublaslt_version"].is_number_integer() ||
        !set.contains("gemm") || !set["gemm"].is_array())
      return bad("a record set without \"device\", \"cublaslt_version\" and \"gemm\"");
    DeviceKey key{set["device"].get<std::string>(), set["cublaslt_version"].get<int64_t>()};
    art::TuningRecords checked;
    checked.set_device(key.first);
    for (const nlohmann::json &entry : set["gemm"]) {
      StatusOr<art::GemmTuningRecord> record = recordFrom(entry);
      if (!record.ok())
        return bad(record.status().message());
      *checked.add_gemm() = *record;
      sets[key][art::shapeOf(*record)] = *record;
    }
    if (Status status = art::checkTuningRecords(checked); !status.ok())
      return bad(status.message());
  }
  return sets;
}

StatusOr<TuningDatabase> TuningDatabase::open(const std::string &path) {
  TuningDatabase database;
  database.path_ = path;
  ASSIGN_OR_RETURN(database.sets_, read(path));
  return database;
}

const art::GemmTuningRecord *TuningDatabase::find(const std::string &device, int64_t version,
                                                  const art::GemmShape &bucket) const {
  auto set = sets_.find({device, version});
  if (set == sets_.end())
    return nullptr;
  auto found = set->second.find(bucket);
  return found == set->second.end() ? nullptr : &found->second;
}

void TuningDatabase::add(const std::string &device, int64_t version,
                         const art::GemmTuningRecord &record) {
  sets_[{device, version}][art::shapeOf(record)] = record;
}

std::vector<art::TuningRecords>
TuningDatabase::select(const std::set<art::GemmShape> &buckets) const {
  std::vector<art::TuningRecords> selected;
  for (const auto &[key, records] : sets_) {
    art::TuningRecords set;
    set.set_device(key.first);
    set.set_cublaslt_version(key.second);
    for (const auto &[shape, record] : records)
      if (buckets.count(shape))
        *set.add_gemm() = record;
    if (set.gemm_size() > 0)
      selected.push_back(std::move(set));
  }
  return selected;
}

Status TuningDatabase::save() {
  ASSIGN_OR_RETURN(Sets onDisk, read(path_));
  for (auto &[key, records] : onDisk)
    for (auto &[shape, record] : records)
      sets_[key][shape] = record;
  nlohmann::json sets = nlohmann::json::array();
  for (const auto &[key, records] : sets_) {
    nlohmann::json gemm = nlohmann::json::array();
    for (const auto &[shape, record] : records)
      gemm.push_back(toJson(record));
    sets.push_back({{"device", key.first}, {"cublaslt_version", key.second}, {"gemm", gemm}});
  }
  const nlohmann::json json = {{"format", kFormat}, {"record_sets", sets}};
  const std::string temporary = path_ + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << json.dump(1) << '\n';
    if (!out.flush())
      return internalError("cannot write " + temporary + ": " + std::strerror(errno));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path_, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return internalError("cannot write " + path_ + ": " + error.message());
  }
  return okStatus();
}

} // namespace infer::codegen
