// See ral/trace.h. Events go to one mutex-guarded buffer (an execution records a handful); the
// wrappers for imported functions are a fixed table of template trampolines, each bound to one
// (name, function) pair for the life of the process.
#include "ral/trace.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "ral/name_encoding.h"

namespace ral::trace {
namespace internal {

std::atomic<bool> g_active{false};

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace internal

namespace {

struct Event {
  const char* category;
  const char* name;  // null: owned_name
  const char* args;  // null: owned_args
  std::string owned_name;
  std::string owned_args;
  int64_t begin_ns, end_ns;
  uint32_t tid;
};

struct State {
  std::mutex mutex;
  std::string path;
  std::vector<Event> events;
  std::map<std::string, uint32_t> tracks;  // name -> id, for the life of the process
};

// Tracks that are not threads are numbered from here, far above thread numbers.
constexpr uint32_t kFirstTrack = 1u << 20;

struct StopHooks {
  std::mutex mutex;  // held while hooks run, so removal waits for a running hook
  std::map<const void*, std::function<void()>> hooks;
};

StopHooks& stopHooks() {
  static auto* h = new StopHooks();
  return *h;
}

// Never destroyed: threads may record while the process exits.
State& state() {
  static State* s = new State();
  return *s;
}

// Small per-thread numbers, in order of first use (Perfetto shows them as tracks).
uint32_t threadNumber() {
  static std::atomic<uint32_t> next{1};
  thread_local const uint32_t mine = next.fetch_add(1);
  return mine;
}

void appendJsonString(std::string& out, const std::string& s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

std::string microseconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return buf;
}

Status writeTrace(const std::string& path, const std::vector<Event>& events,
                  const std::map<std::string, uint32_t>& tracks) {
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  const int pid = static_cast<int>(getpid());
  int64_t origin = events.empty() ? 0 : events.front().begin_ns;
  for (const Event& e : events) origin = std::min(origin, e.begin_ns);
  bool first = true;
  // Names of the tracks that are not threads (metadata events).
  for (const auto& [name, id] : tracks) {
    if (!first) out += ",\n";
    first = false;
    out += "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + std::to_string(pid) +
           ", \"tid\": " + std::to_string(id) + ", \"args\": {\"name\": ";
    appendJsonString(out, name);
    out += "}}";
  }
  for (const Event& e : events) {
    if (!first) out += ",\n";
    first = false;
    out += "{\"ph\": \"X\", \"cat\": ";
    appendJsonString(out, e.category);
    out += ", \"name\": ";
    appendJsonString(out, e.name != nullptr ? std::string(e.name) : e.owned_name);
    out += ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(e.tid);
    out += ", \"ts\": " + microseconds(e.begin_ns - origin);
    out += ", \"dur\": " + microseconds(e.end_ns - e.begin_ns);
    out += ", \"args\": {";
    out += e.args != nullptr ? std::string(e.args) : e.owned_args;
    out += "}}";
  }
  out += "\n]}\n";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return unavailable("trace: cannot open '", path, "' for writing");
  const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  if (std::fclose(f) != 0 || !ok) return unavailable("trace: cannot write '", path, "'");
  return Status();
}

// RAL_TRACE=path: record from the library's first use to the process's exit.
[[maybe_unused]] const bool kFromEnvironment = [] {
  const char* path = std::getenv("RAL_TRACE");
  if (path == nullptr || path[0] == '\0') return false;
  if (!start(path).ok()) return false;
  std::atexit([] {
    const Status s = stop();
    if (!s.ok()) std::fprintf(stderr, "ral: RAL_TRACE: %s\n", s.toString().c_str());
  });
  return true;
}();

// ---- wrappers for imported functions

constexpr size_t kSlots = 512;

struct Slot {
  std::string target;  // the span's name
  std::string args;
  ral_fn fn = nullptr;
};

std::array<Slot, kSlots>& slots() {
  static auto* s = new std::array<Slot, kSlots>();
  return *s;
}

template <size_t I>
void trampoline(void* ctx, void** args) {
  const Slot& slot = slots()[I];
  Scope scope("ral", slot.target.c_str(), slot.args.c_str());
  slot.fn(ctx, args);
}

template <size_t... I>
constexpr std::array<ral_fn, sizeof...(I)> trampolines(std::index_sequence<I...>) {
  return {&trampoline<I>...};
}

constexpr std::array<ral_fn, kSlots> kTrampolines = trampolines(std::make_index_sequence<kSlots>());

// The function a wrapper stands for (`fn` itself when it is not one).
ral_fn untraced(ral_fn fn) {
  for (size_t i = 0; i < kSlots; ++i)
    if (kTrampolines[i] == fn) return slots()[i].fn;
  return fn;
}

// Watched import tables and each entry's unwrapped function; guarded by State::mutex.
std::map<ral_import*, std::vector<ral_fn>>& watched() {
  static auto* w = new std::map<ral_import*, std::vector<ral_fn>>();
  return *w;
}

// Points every watched entry at its wrapper (`wrap`) or back at its function.
void switchWatched(bool wrap) {
  for (auto& [table, fns] : watched())
    for (size_t i = 0; i < fns.size(); ++i)
      table[i].fn = wrap ? traced(table[i].name, fns[i]) : fns[i];
}

}  // namespace

namespace internal {

void record(const char* category, const char* name, const char* args, std::string owned_name,
            std::string owned_args, int64_t begin_ns, int64_t end_ns) {
  const uint32_t tid = threadNumber();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!active()) return;  // stopped while the span was open
  s.events.push_back(
      {category, name, args, std::move(owned_name), std::move(owned_args), begin_ns, end_ns, tid});
}

}  // namespace internal

Status start(const std::string& path) {
  if (path.empty()) return invalidArgument("trace: no path to write the trace to");
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (active()) return failedPrecondition("trace: already recording to '", s.path, "'");
  s.path = path;
  s.events.clear();
  s.events.reserve(1 << 16);
  internal::g_active.store(true, std::memory_order_relaxed);
  switchWatched(true);
  return Status();
}

Status stop() {
  if (!active()) return failedPrecondition("trace: not recording");
  {
    // Device work that completed is recorded before the file is written.
    StopHooks& h = stopHooks();
    std::lock_guard<std::mutex> lock(h.mutex);
    for (auto& [key, hook] : h.hooks) hook();
  }
  std::vector<Event> events;
  std::string path;
  std::map<std::string, uint32_t> tracks;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!active()) return failedPrecondition("trace: not recording");
    internal::g_active.store(false, std::memory_order_relaxed);
    switchWatched(false);
    events.swap(s.events);
    path.swap(s.path);
    tracks = s.tracks;
  }
  return writeTrace(path, events, tracks);
}

uint32_t track(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.tracks.find(name);
  if (it != s.tracks.end()) return it->second;
  const uint32_t id = kFirstTrack + static_cast<uint32_t>(s.tracks.size());
  s.tracks.emplace(name, id);
  return id;
}

void recordOn(uint32_t track, const char* category, std::string name, std::string args,
              int64_t begin_ns, int64_t end_ns) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!active()) return;
  s.events.push_back(
      {category, nullptr, nullptr, std::move(name), std::move(args), begin_ns, end_ns, track});
}

void addStopHook(const void* key, std::function<void()> hook) {
  StopHooks& h = stopHooks();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.hooks[key] = std::move(hook);
}

void removeStopHook(const void* key) {
  StopHooks& h = stopHooks();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.hooks.erase(key);
}

std::string path() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return active() ? s.path : std::string();
}

ral_fn traced(const char* api_name, ral_fn fn) {
  if (!active() || api_name == nullptr || fn == nullptr) return fn;
  static std::mutex mutex;
  static auto* bound = new std::map<std::pair<std::string, ral_fn>, size_t>();
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(std::string(api_name), fn);
  if (auto it = bound->find(key); it != bound->end()) return kTrampolines[it->second];
  if (bound->size() == kSlots) return fn;
  const size_t i = bound->size();
  Slot& slot = slots()[i];
  slot.fn = fn;
  slot.target = api_name;
  if (auto parts = parseApiName(api_name); parts.ok()) {
    slot.target = std::string(parts->target);
    slot.args = "\"device\": \"" + std::string(parts->device) + "\", \"api\": ";
    appendJsonString(slot.args, api_name);
  }
  bound->emplace(key, i);
  return kTrampolines[i];
}

void watchImports(ral_import* imports, size_t count) {
  if (imports == nullptr || count == 0) return;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<ral_fn> fns(count);
  for (size_t i = 0; i < count; ++i) fns[i] = untraced(imports[i].fn);
  watched()[imports] = std::move(fns);
}

void unwatchImports(ral_import* imports) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  watched().erase(imports);
}

}  // namespace ral::trace
