#include "ral/name_encoding.h"

namespace ral {

std::string encodeApiName(std::string_view target, std::string_view device,
                          std::string_view signature) {
  std::string name;
  name.reserve(target.size() + device.size() + signature.size() + 6);
  name.append(target).append(kNameSeparator).append(device).append(kNameSeparator);
  name.append(signature);
  return name;
}

std::string scalarTypeCode(DType t) { return std::string(dtypeName(t)); }

std::string memrefTypeCode(DType t, int rank) {
  return "m" + std::to_string(rank) + "d" + scalarTypeCode(t);
}

std::string encodeApiName(std::string_view target, std::string_view device,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  auto join = [](const std::vector<std::string>& codes) {
    if (codes.empty()) return std::string("void");
    std::string s;
    for (size_t i = 0; i < codes.size(); ++i) {
      if (i) s += '_';
      s += codes[i];
    }
    return s;
  };
  return encodeApiName(target, device, join(inputs) + std::string(kNameSeparator) + join(outputs));
}

StatusOr<ApiNameParts> parseApiName(std::string_view full_name) {
  std::string_view parts[4];
  std::string_view rest = full_name;
  for (int i = 0; i < 3; ++i) {
    const size_t pos = rest.find(kNameSeparator);
    if (pos == std::string_view::npos) break;
    parts[i] = rest.substr(0, pos);
    rest = rest.substr(pos + kNameSeparator.size());
    if (i == 2) parts[3] = rest;
  }
  if (parts[3].empty() || parts[0].empty() || parts[1].empty() || parts[2].empty() ||
      parts[3].find(kNameSeparator) != std::string_view::npos) {
    return invalidArgument("'", full_name,
                           "' is not a RAL api name (expected target___device___inputs___outputs)");
  }
  return ApiNameParts{parts[0], parts[1], parts[2], parts[3]};
}

}  // namespace ral
