//===- LaunchArgs.cpp - operand and attribute access for kernels ----------===//

#include "runtime/exec/LaunchArgs.h"
#include "runtime/artifact/ArtifactFormat.h"

#include <cctype>

namespace infer::exec {
namespace art = artifact;

namespace {
const art::Attribute *findAttr(const art::Launch &launch, const std::string &name) {
  return art::findAttribute(launch, name);
}
} // namespace

const View *LaunchArgs::operand(art::OperandRole role) const {
  for (size_t i = 0; i < roles.size(); ++i)
    if (roles[i] == role)
      return &operands[i];
  return nullptr;
}

std::vector<const View *> LaunchArgs::all(art::OperandRole role) const {
  std::vector<const View *> found;
  for (size_t i = 0; i < roles.size(); ++i)
    if (roles[i] == role)
      found.push_back(&operands[i]);
  return found;
}

StatusOr<const View *> LaunchArgs::required(art::OperandRole role) const {
  if (const View *view = operand(role))
    return view;
  return error("has no '" + art::operandRoleName(role) + "' operand");
}

Status LaunchArgs::error(const std::string &message) const {
  return invalidArgumentError("launch " + std::to_string(index) + " (" +
                              art::launchKindName(launch->kind()) + ") " + message);
}

Status LaunchArgs::expectF32(const View &view, int64_t elements, const std::string &what) const {
  if (view.type != art::ELEMENT_TYPE_F32)
    return error(what + " is " + art::elementTypeName(view.type) + ", expected f32");
  if (view.elements != elements)
    return error(what + " has " + std::to_string(view.elements) + " elements, expected " +
                 std::to_string(elements));
  return okStatus();
}

StatusOr<int64_t> LaunchArgs::intAttr(const std::string &name) const {
  const art::Attribute *attribute = findAttr(*launch, name);
  if (!attribute || attribute->value_case() != art::Attribute::kIntValue)
    return error("has no integer attribute '" + name + "'");
  return attribute->int_value();
}

int64_t LaunchArgs::intAttr(const std::string &name, int64_t fallback) const {
  return art::intAttribute(*launch, name, fallback);
}

StatusOr<double> LaunchArgs::floatAttr(const std::string &name) const {
  const art::Attribute *attribute = findAttr(*launch, name);
  if (!attribute || attribute->value_case() != art::Attribute::kFloatValue)
    return error("has no float attribute '" + name + "'");
  return attribute->float_value();
}

double LaunchArgs::floatAttr(const std::string &name, double fallback) const {
  const art::Attribute *attribute = findAttr(*launch, name);
  return attribute && attribute->value_case() == art::Attribute::kFloatValue
             ? attribute->float_value()
             : fallback;
}

bool LaunchArgs::boolAttr(const std::string &name, bool fallback) const {
  const art::Attribute *attribute = findAttr(*launch, name);
  return attribute && attribute->value_case() == art::Attribute::kBoolValue ? attribute->bool_value()
                                                                             : fallback;
}

StatusOr<std::string> LaunchArgs::stringAttr(const std::string &name) const {
  const art::Attribute *attribute = findAttr(*launch, name);
  if (!attribute || attribute->value_case() != art::Attribute::kStringValue)
    return error("has no string attribute '" + name + "'");
  return attribute->string_value();
}

} // namespace infer::exec
