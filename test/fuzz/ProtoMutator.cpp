//===- ProtoMutator.cpp - structure-aware protobuf mutation ---------------===//
#include "test/fuzz/ProtoMutator.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace infer::fuzz {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

/// One field of one message in the tree; `index` is -1 for a singular field.
struct Slot {
  Message *message;
  const FieldDescriptor *field;
  int index;
};

struct Tree {
  std::vector<Slot> scalars;        ///< present scalar values and repeated elements
  std::vector<Slot> fields;         ///< every field of every message, set or not
  std::vector<std::string> strings; ///< every string value, to reconnect names
};

bool isText(const FieldDescriptor *field) {
  return field->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
         field->type() == FieldDescriptor::TYPE_STRING;
}

void collect(Message &message, Tree &tree, int depth) {
  const Reflection *reflection = message.GetReflection();
  const google::protobuf::Descriptor *descriptor = message.GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor *field = descriptor->field(i);
    tree.fields.push_back({&message, field, -1});
    bool isMessage = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (field->is_repeated()) {
      int size = reflection->FieldSize(message, field);
      for (int j = 0; j < size; ++j) {
        if (isMessage) {
          if (depth < 64)
            collect(*reflection->MutableRepeatedMessage(&message, field, j), tree, depth + 1);
          continue;
        }
        tree.scalars.push_back({&message, field, j});
        if (isText(field))
          tree.strings.push_back(reflection->GetRepeatedString(message, field, j));
      }
    } else if (reflection->HasField(message, field)) {
      if (isMessage) {
        if (depth < 64)
          collect(*reflection->MutableMessage(&message, field), tree, depth + 1);
        continue;
      }
      tree.scalars.push_back({&message, field, -1});
      if (isText(field))
        tree.strings.push_back(reflection->GetString(message, field));
    }
  }
}

template <typename T> T pick(std::mt19937_64 &random, const std::vector<T> &values) {
  return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(random)];
}

int64_t edgeInteger(std::mt19937_64 &random, int64_t value) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t bit31 = int64_t(1) << 31;
  // value ± 1 and doubling wrap like the unsigned arithmetic they are.
  auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
  return pick<int64_t>(random, {0,
                                1,
                                -1,
                                2,
                                3,
                                8,
                                64,
                                255,
                                4096,
                                bit31,
                                bit31 - 1,
                                -bit31,
                                int64_t(1) << 40,
                                big,
                                -big - 1,
                                wrap(uint64_t(value) + 1),
                                wrap(uint64_t(value) - 1),
                                wrap(uint64_t(value) * 2),
                                wrap(0 - uint64_t(value)),
                                static_cast<int64_t>(random() % 100000)});
}

double edgeFloat(std::mt19937_64 &random, double value) {
  double inf = std::numeric_limits<double>::infinity();
  return pick<double>(random, {0.0, -0.0, 1.0, -1.0, 0.5, std::nan(""), inf, -inf, 1e-45, 3.4e38,
                               value * 2, -value, value + 1});
}

std::string mutateBytes(std::string text, size_t maxBytes) {
  size_t capacity = std::min(maxBytes, std::max<size_t>(text.size() * 2, text.size() + 16));
  if (capacity == 0)
    return text;
  if (text.size() > capacity)
    text.resize(capacity);
  size_t size = text.size();
  text.resize(capacity);
  size = LLVMFuzzerMutate(reinterpret_cast<uint8_t *>(text.data()), size, capacity);
  text.resize(size);
  return text;
}

void mutateScalar(const Slot &slot, const Tree &tree, std::mt19937_64 &random,
                  size_t maxStringBytes) {
  Message &m = *slot.message;
  const Reflection *r = m.GetReflection();
  const FieldDescriptor *f = slot.field;
  bool rep = slot.index >= 0;
  int i = slot.index;
  switch (f->cpp_type()) {
  case FieldDescriptor::CPPTYPE_INT32: {
    auto v = static_cast<int32_t>(
        edgeInteger(random, rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f)));
    rep ? r->SetRepeatedInt32(&m, f, i, v) : r->SetInt32(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_INT64: {
    int64_t v = edgeInteger(random, rep ? r->GetRepeatedInt64(m, f, i) : r->GetInt64(m, f));
    rep ? r->SetRepeatedInt64(&m, f, i, v) : r->SetInt64(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_UINT32: {
    auto v = static_cast<uint32_t>(
        edgeInteger(random, rep ? r->GetRepeatedUInt32(m, f, i) : r->GetUInt32(m, f)));
    rep ? r->SetRepeatedUInt32(&m, f, i, v) : r->SetUInt32(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_UINT64: {
    uint64_t old = rep ? r->GetRepeatedUInt64(m, f, i) : r->GetUInt64(m, f);
    auto v = static_cast<uint64_t>(edgeInteger(random, static_cast<int64_t>(old)));
    rep ? r->SetRepeatedUInt64(&m, f, i, v) : r->SetUInt64(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_DOUBLE: {
    double v = edgeFloat(random, rep ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f));
    rep ? r->SetRepeatedDouble(&m, f, i, v) : r->SetDouble(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_FLOAT: {
    auto v = static_cast<float>(
        edgeFloat(random, rep ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f)));
    rep ? r->SetRepeatedFloat(&m, f, i, v) : r->SetFloat(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_BOOL: {
    bool v = !(rep ? r->GetRepeatedBool(m, f, i) : r->GetBool(m, f));
    rep ? r->SetRepeatedBool(&m, f, i, v) : r->SetBool(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_ENUM: {
    const google::protobuf::EnumDescriptor *e = f->enum_type();
    const google::protobuf::EnumValueDescriptor *v =
        e->value(std::uniform_int_distribution<int>(0, e->value_count() - 1)(random));
    rep ? r->SetRepeatedEnum(&m, f, i, v) : r->SetEnum(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_STRING: {
    std::string old = rep ? r->GetRepeatedString(m, f, i) : r->GetString(m, f);
    bool reuse = isText(f) && !tree.strings.empty() && random() % 2 == 0;
    std::string v = reuse ? pick(random, tree.strings) : mutateBytes(old, maxStringBytes);
    if (isText(f) && f->file()->syntax() == google::protobuf::FileDescriptor::SYNTAX_PROTO3)
      // proto3 refuses a string that is not UTF-8 at parse: keep it ASCII
      v.erase(std::remove_if(v.begin(), v.end(), [](char c) { return c & 0x80; }), v.end());
    rep ? r->SetRepeatedString(&m, f, i, v) : r->SetString(&m, f, v);
    break;
  }
  case FieldDescriptor::CPPTYPE_MESSAGE:
    break;
  }
}

/// Sets an unset singular field, or appends to a repeated one (a copy of one
/// of its elements where there is one, an edge value otherwise).
void addToField(const Slot &slot, std::mt19937_64 &random) {
  Message &m = *slot.message;
  const Reflection *r = m.GetReflection();
  const FieldDescriptor *f = slot.field;
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (!f->is_repeated()) {
      r->MutableMessage(&m, f);
      return;
    }
    int size = r->FieldSize(m, f);
    Message *added = r->AddMessage(&m, f);
    if (size > 0)
      added->CopyFrom(
          r->GetRepeatedMessage(m, f, std::uniform_int_distribution<int>(0, size - 1)(random)));
    return;
  }
  if (!f->is_repeated()) {
    mutateScalar({&m, f, -1}, Tree{}, random, 64);
    return;
  }
  int64_t v = edgeInteger(random, 0);
  switch (f->cpp_type()) {
  case FieldDescriptor::CPPTYPE_INT32:
    r->AddInt32(&m, f, static_cast<int32_t>(v));
    break;
  case FieldDescriptor::CPPTYPE_INT64:
    r->AddInt64(&m, f, v);
    break;
  case FieldDescriptor::CPPTYPE_UINT32:
    r->AddUInt32(&m, f, static_cast<uint32_t>(v));
    break;
  case FieldDescriptor::CPPTYPE_UINT64:
    r->AddUInt64(&m, f, static_cast<uint64_t>(v));
    break;
  case FieldDescriptor::CPPTYPE_DOUBLE:
    r->AddDouble(&m, f, edgeFloat(random, 0));
    break;
  case FieldDescriptor::CPPTYPE_FLOAT:
    r->AddFloat(&m, f, static_cast<float>(edgeFloat(random, 0)));
    break;
  case FieldDescriptor::CPPTYPE_BOOL:
    r->AddBool(&m, f, true);
    break;
  case FieldDescriptor::CPPTYPE_ENUM:
    r->AddEnum(&m, f, f->enum_type()->value(0));
    break;
  case FieldDescriptor::CPPTYPE_STRING:
    r->AddString(&m, f, "");
    break;
  case FieldDescriptor::CPPTYPE_MESSAGE:
    break;
  }
}

void mutateOnce(Message &message, std::mt19937_64 &random, size_t maxStringBytes) {
  Tree tree;
  collect(message, tree, 0);
  if (tree.fields.empty())
    return;
  unsigned kind = random() % 10;
  if (kind < 5 && !tree.scalars.empty()) { // change one value
    mutateScalar(pick(random, tree.scalars), tree, random, maxStringBytes);
    return;
  }
  Slot slot = pick(random, tree.fields);
  const Reflection *r = slot.message->GetReflection();
  if (kind < 7) { // set a field or add an element
    addToField(slot, random);
    return;
  }
  if (!slot.field->is_repeated()) {
    r->ClearField(slot.message, slot.field);
    return;
  }
  int size = r->FieldSize(*slot.message, slot.field);
  if (size == 0)
    return;
  int a = std::uniform_int_distribution<int>(0, size - 1)(random);
  if (kind == 7) { // remove one element: move it last, drop the last
    r->SwapElements(slot.message, slot.field, a, size - 1);
    r->RemoveLast(slot.message, slot.field);
  } else { // reorder two elements
    r->SwapElements(slot.message, slot.field, a,
                    std::uniform_int_distribution<int>(0, size - 1)(random));
  }
}

} // namespace

void silenceProtobufLogs() { google::protobuf::SetLogHandler(nullptr); }

void mutateMessage(Message &message, std::mt19937_64 &random, size_t maxStringBytes, int count) {
  for (int i = 0; i < count; ++i)
    mutateOnce(message, random, maxStringBytes);
}

} // namespace infer::fuzz
