//===- HashMaps.h - flat hash maps for vocabularies and merges --*- C++ -*-===//
//
// Open addressing with linear probing. StringMap keeps its keys in one arena
// and looks up by string_view without allocating (the BPE's vocabulary and
// word cache); PairMap maps a pair of token ids to a merge.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_HASHMAPS_H
#define INFER_RUNTIME_TOKENIZER_HASHMAPS_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infer::tokenizer {

uint64_t hashBytes(std::string_view bytes);

class StringMap {
public:
  /// Inserts `key` or overwrites its value.
  void set(std::string_view key, uint32_t value) { setHashed(key, hashBytes(key), value); }
  void setHashed(std::string_view key, uint64_t hash, uint32_t value);
  const uint32_t *find(std::string_view key) const { return findHashed(key, hashBytes(key)); }
  const uint32_t *findHashed(std::string_view key, uint64_t hash) const;
  size_t size() const { return size_; }

private:
  struct Slot {
    uint64_t hash = 0; // 0: empty (hashes are made odd)
    uint32_t offset = 0, length = 0;
    uint32_t value = 0;
  };
  void grow();
  std::vector<Slot> slots_;
  std::string arena_;
  size_t size_ = 0;
};

/// A BPE merge: its rank (position in the merges list) and the merged id.
struct MergeRule {
  uint32_t rank;
  int32_t merged;
};

class PairMap {
public:
  void reserve(size_t n);
  /// Inserts or overwrites (HF keeps the later of two equal pairs).
  void set(int32_t left, int32_t right, MergeRule rule);
  const MergeRule *find(int32_t left, int32_t right) const {
    if (slots_.empty())
      return nullptr;
    uint64_t key = pack(left, right);
    size_t mask = slots_.size() - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      const Slot &slot = slots_[i];
      if (slot.key == key)
        return &slot.rule;
      if (slot.key == kEmpty)
        return nullptr;
    }
  }

private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  static uint64_t pack(int32_t a, int32_t b) {
    return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
  }
  static size_t mix(uint64_t key) {
    key ^= key >> 31;
    key *= 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(key ^ (key >> 29));
  }
  struct Slot {
    uint64_t key = kEmpty;
    MergeRule rule{};
  };
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_HASHMAPS_H
