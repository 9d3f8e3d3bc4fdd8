//===- HashMaps.cpp - flat hash maps for vocabularies and merges ----------===//
#include "runtime/tokenizer/HashMaps.h"

#include <cstring>

namespace infer::tokenizer {

uint64_t hashBytes(std::string_view bytes) {
  const char *p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    h = (h ^ v) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  h = (h ^ v) * 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 29;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 32;
  return h | 1;
}

void StringMap::setHashed(std::string_view key, uint64_t hash, uint32_t value) {
  if ((size_ + 1) * 2 > slots_.size())
    grow();
  size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot &slot = slots_[i];
    if (slot.hash == 0) {
      slot.hash = hash;
      slot.offset = static_cast<uint32_t>(arena_.size());
      slot.length = static_cast<uint32_t>(key.size());
      slot.value = value;
      arena_.append(key);
      ++size_;
      return;
    }
    if (slot.hash == hash && slot.length == key.size() &&
        std::memcmp(arena_.data() + slot.offset, key.data(), key.size()) == 0) {
      slot.value = value;
      return;
    }
  }
}

const uint32_t *StringMap::findHashed(std::string_view key, uint64_t hash) const {
  if (slots_.empty())
    return nullptr;
  size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot &slot = slots_[i];
    if (slot.hash == 0)
      return nullptr;
    if (slot.hash == hash && slot.length == key.size() &&
        std::memcmp(arena_.data() + slot.offset, key.data(), key.size()) == 0)
      return &slot.value;
  }
}

void StringMap::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot());
  size_t mask = slots_.size() - 1;
  for (const Slot &slot : old) {
    if (slot.hash == 0)
      continue;
    size_t i = slot.hash & mask;
    while (slots_[i].hash != 0)
      i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

void PairMap::reserve(size_t n) {
  size_t capacity = 64;
  while (capacity < n * 2)
    capacity *= 2;
  if (capacity <= slots_.size())
    return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot());
  size_ = 0;
  for (const Slot &slot : old)
    if (slot.key != kEmpty)
      set(int32_t(slot.key >> 32), int32_t(uint32_t(slot.key)), slot.rule);
}

void PairMap::set(int32_t left, int32_t right, MergeRule rule) {
  if ((size_ + 1) * 2 > slots_.size())
    reserve(size_ + 1);
  uint64_t key = pack(left, right);
  size_t mask = slots_.size() - 1;
  for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
    Slot &slot = slots_[i];
    if (slot.key == kEmpty) {
      slot.key = key;
      slot.rule = rule;
      ++size_;
      return;
    }
    if (slot.key == key) {
      slot.rule = rule;
      return;
    }
  }
}

} // namespace infer::tokenizer
