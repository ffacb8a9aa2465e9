// Test helpers that read trace files (ral/trace.h writes one event per line): the host waits
// drivers recorded on the threads that ran submissions, and the device spans on a device's
// tracks. Header-only.
#ifndef RAL_TESTS_SUPPORT_TRACE_CHECKS_H_
#define RAL_TESTS_SUPPORT_TRACE_CHECKS_H_

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ral::testing {

// The value of `"key": ` in one event line of a trace file (ral/trace.cc writes one per line).
inline std::string traceField(const std::string& line, const std::string& key) {
  const std::string tag = "\"" + key + "\": ";
  const size_t at = line.find(tag);
  if (at == std::string::npos) return "";
  size_t begin = at + tag.size(), end = begin;
  if (line[begin] == '"') {
    end = line.find('"', ++begin);
  } else {
    while (end < line.size() && line[end] != ',' && line[end] != '}') ++end;
  }
  return line.substr(begin, end - begin);
}

// Host waits of drivers ("synchronize", "semaphore_wait") on the tracks that ran submissions,
// from the trace file at `path`, as "name (args)" lines.
inline std::vector<std::string> hostWaitsOnSubmissionThreads(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::set<std::string> submitting;
  for (const std::string& l : lines)
    if (traceField(l, "cat") == "submission") submitting.insert(traceField(l, "tid"));
  std::vector<std::string> waits;
  for (const std::string& l : lines) {
    const std::string name = traceField(l, "name");
    if (traceField(l, "cat") == "driver" && submitting.count(traceField(l, "tid")) != 0 &&
        (name == "synchronize" || name == "semaphore_wait"))
      waits.push_back(l);
  }
  return waits;
}

struct DeviceSpan {
  std::string name, track;
  double ts = 0, dur = 0;  // microseconds
};

// Spans of category "device" on tracks whose name starts with `track_prefix` ("cuda:0 stream").
inline std::vector<DeviceSpan> deviceSpans(const std::string& path,
                                           const std::string& track_prefix) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::map<std::string, std::string> tracks;  // tid -> name
  const std::string tag = "\"args\": {\"name\": \"";
  for (const std::string& l : lines) {
    const size_t at = l.find(tag);
    if (traceField(l, "ph") != "M" || at == std::string::npos) continue;
    const size_t begin = at + tag.size();
    tracks[traceField(l, "tid")] = l.substr(begin, l.find('"', begin) - begin);
  }
  std::vector<DeviceSpan> spans;
  for (const std::string& l : lines) {
    if (traceField(l, "cat") != "device") continue;
    const std::string track = tracks[traceField(l, "tid")];
    if (track.rfind(track_prefix, 0) != 0) continue;
    spans.push_back({traceField(l, "name"), track, std::stod(traceField(l, "ts")),
                     std::stod(traceField(l, "dur"))});
  }
  return spans;
}

}  // namespace ral::testing

#endif  // RAL_TESTS_SUPPORT_TRACE_CHECKS_H_
