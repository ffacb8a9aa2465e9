#include "ral/device_uri.h"

#include <cctype>
#include <charconv>
#include <mutex>

namespace ral {
namespace {

struct EnumeratorTable {
  std::mutex mutex;
  DeviceEnumerator enumerators[kNumDeviceKinds];
};
EnumeratorTable& enumeratorTable() {
  static EnumeratorTable* table = new EnumeratorTable();
  return *table;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status badUri(std::string_view text, std::string_view why) {
  return invalidArgument("bad device '", text, "': ", why,
                         " (expected KIND, KIND:N, KIND://N, KIND://GPU-<uuid> or "
                         "KIND://name=TEXT, with KIND one of cpu, cuda, vulkan, hsa)");
}

// Lower-case hex digits of a UUID, without "GPU-" and dashes; empty when it is not one.
std::string normalizedUuid(std::string_view text) {
  std::string t = lower(text);
  if (t.rfind("gpu-", 0) == 0) t.erase(0, 4);
  std::string hex;
  for (char c : t) {
    if (c == '-') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    hex.push_back(c);
  }
  return hex;
}

}  // namespace

std::string describeDevice(const DeviceInfo& device) {
  std::string line = internal::strCat(deviceKindName(device.kind), ":", device.ordinal);
  if (!device.uuid.empty()) line += "  " + device.uuid;
  line += "  " + device.name;
  if (!device.arch.empty()) line += " (" + device.arch + ")";
  return line;
}

StatusOr<DeviceUri> parseDeviceUri(std::string_view text) {
  DeviceUri uri;
  uri.text = std::string(text);
  if (text.empty()) return badUri(text, "it is empty");
  size_t kind_end = text.find(':');
  auto kind = deviceKindFromName(text.substr(0, kind_end));
  if (!kind.ok()) return badUri(text, kind.status().message());
  uri.kind = *kind;
  if (kind_end == std::string_view::npos) return uri;
  std::string_view rest = text.substr(kind_end + 1);
  if (rest.rfind("//", 0) == 0) rest.remove_prefix(2);
  if (rest.empty()) return badUri(text, "nothing follows the kind");
  int ordinal = -1;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), ordinal);
  if (end == rest.data() + rest.size()) {  // only digits (a UUID may start with some)
    if (ec != std::errc() || ordinal < 0)
      return badUri(text, internal::strCat("ordinal ", rest, " is out of range"));
    uri.selector = DeviceUri::Selector::kOrdinal;
    uri.ordinal = ordinal;
    return uri;
  }
  if (rest.rfind("name=", 0) == 0) {
    if (rest.size() == 5) return badUri(text, "name= is empty");
    uri.selector = DeviceUri::Selector::kName;
    uri.name = std::string(rest.substr(5));
    return uri;
  }
  std::string hex = normalizedUuid(rest);
  if (hex.size() < 8 || hex.size() > 64)
    return badUri(text, internal::strCat("'", rest, "' is neither an ordinal nor a UUID"));
  uri.selector = DeviceUri::Selector::kUuid;
  uri.uuid = std::move(hex);
  return uri;
}

Status registerDeviceEnumerator(DeviceKind kind, DeviceEnumerator enumerator) {
  auto& table = enumeratorTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto& slot = table.enumerators[static_cast<int>(kind)];
  if (slot)
    return alreadyExists("a device enumerator for '", deviceKindName(kind),
                         "' is already registered");
  slot = std::move(enumerator);
  return Status();
}

StatusOr<std::vector<DeviceInfo>> enumerateDevices(DeviceKind kind) {
  DeviceEnumerator enumerator;
  {
    auto& table = enumeratorTable();
    std::lock_guard<std::mutex> lock(table.mutex);
    enumerator = table.enumerators[static_cast<int>(kind)];
  }
  if (!enumerator)
    return unavailable("no '", deviceKindName(kind),
                       "' driver was built into this RAL library (enable it at configure time)");
  return enumerator();
}

StatusOr<DeviceInfo> resolveDevice(const DeviceUri& uri) {
  auto devices = enumerateDevices(uri.kind);
  if (!devices.ok())
    return Status(devices.status().code(),
                  internal::strCat("device '", uri.text, "': ", devices.status().message()));
  for (const DeviceInfo& d : *devices) {
    switch (uri.selector) {
      case DeviceUri::Selector::kDefault:
        return d;  // enumerators list the default device first
      case DeviceUri::Selector::kOrdinal:
        if (d.ordinal == uri.ordinal) return d;
        break;
      case DeviceUri::Selector::kUuid:
        if (!d.uuid.empty() && normalizedUuid(d.uuid) == uri.uuid) return d;
        break;
      case DeviceUri::Selector::kName:
        if (lower(d.name).find(lower(uri.name)) != std::string::npos) return d;
        break;
    }
  }
  std::string list;
  for (const DeviceInfo& d : *devices) list += "\n  " + describeDevice(d);
  if (list.empty()) list = " none";
  return notFound("no ", deviceKindName(uri.kind), " device matches '", uri.text,
                  "'; the devices are:", list);
}

StatusOr<DeviceInfo> resolveDevice(std::string_view text) {
  RAL_ASSIGN_OR_RETURN(DeviceUri uri, parseDeviceUri(text));
  return resolveDevice(uri);
}


}  // namespace ral
