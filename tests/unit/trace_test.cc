// ral/trace.h: recording state, spans and the import wrappers (the trace file's structure is
// checked end to end by tests/cli/trace_test.py).
#include "ral/trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace ral::trace {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int g_calls = 0;
void counted(void*, void**) { ++g_calls; }

TEST(TraceTest, StartAndStopAreCheckedAndTheFileIsWritten) {
  const std::string path = ::testing::TempDir() + "ral_trace_test.json";
  EXPECT_FALSE(active());
  EXPECT_EQ(stop().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(start("").code(), StatusCode::kInvalidArgument);
  { Scope ignored("test", "before"); }  // not recording: nothing kept
  ASSERT_TRUE(start(path).ok());
  EXPECT_TRUE(active());
  EXPECT_EQ(trace::path(), path);
  EXPECT_EQ(start(path).code(), StatusCode::kFailedPrecondition);
  { Scope span("test", std::string("outer \"quoted\"")); }
  std::thread other([] { Scope span("test", "other thread"); });
  other.join();
  ASSERT_TRUE(stop().ok());
  EXPECT_FALSE(active());
  const std::string json = readFile(path);
  EXPECT_EQ(json.find("before"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("name": "outer \"quoted\"")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("name": "other thread")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("tid": )"), std::string::npos) << json;
  std::remove(path.c_str());
}

TEST(TraceTest, ImportsAreWrappedOnlyWhileRecording) {
  const char* name = "ral_test_fn___cpu___pvoid___void";
  EXPECT_EQ(traced(name, &counted), &counted);
  const std::string path = ::testing::TempDir() + "ral_trace_wrap.json";
  ASSERT_TRUE(start(path).ok());
  ral_fn wrapped = traced(name, &counted);
  EXPECT_NE(wrapped, &counted);
  EXPECT_EQ(traced(name, &counted), wrapped);  // one wrapper per (name, function)
  g_calls = 0;
  wrapped(nullptr, nullptr);
  wrapped(nullptr, nullptr);
  EXPECT_EQ(g_calls, 2);
  ASSERT_TRUE(stop().ok());
  wrapped(nullptr, nullptr);  // a wrapper outlives the trace and still calls through
  EXPECT_EQ(g_calls, 3);
  const std::string json = readFile(path);
  size_t spans = 0;
  for (size_t at = json.find(R"("name": "ral_test_fn")"); at != std::string::npos;
       at = json.find(R"("name": "ral_test_fn")", at + 1))
    ++spans;
  EXPECT_EQ(spans, 2u) << json;
  EXPECT_NE(json.find(R"("device": "cpu")"), std::string::npos) << json;
  std::remove(path.c_str());
}

TEST(TraceTest, WatchedImportTablesAreWrappedWhileRecordingAndRestoredAfter) {
  ral_import table[] = {{"ral_watched_fn___cpu___pvoid___void", &counted}};
  watchImports(table, 1);  // linked before any trace
  EXPECT_EQ(table[0].fn, &counted);
  const std::string path = ::testing::TempDir() + "ral_trace_watch.json";
  ASSERT_TRUE(start(path).ok());
  EXPECT_NE(table[0].fn, &counted);
  g_calls = 0;
  table[0].fn(nullptr, nullptr);
  EXPECT_EQ(g_calls, 1);
  ASSERT_TRUE(stop().ok());
  EXPECT_EQ(table[0].fn, &counted);
  EXPECT_NE(readFile(path).find(R"("name": "ral_watched_fn")"), std::string::npos);
  // Linked while recording (the entry already a wrapper): back to the function at stop.
  ral_import later[] = {{"ral_watched_fn___cpu___pvoid___void", &counted}};
  ASSERT_TRUE(start(path).ok());
  later[0].fn = traced(later[0].name, &counted);
  watchImports(later, 1);
  ASSERT_TRUE(stop().ok());
  EXPECT_EQ(later[0].fn, &counted);
  // Unwatched tables are left alone.
  unwatchImports(table);
  unwatchImports(later);
  ASSERT_TRUE(start(path).ok());
  EXPECT_EQ(table[0].fn, &counted);
  ASSERT_TRUE(stop().ok());
  std::remove(path.c_str());
}

TEST(TraceTest, AnUnwritablePathIsAnErrorAndRecordingStops) {
  ASSERT_TRUE(start("/nonexistent-dir/t.json").ok());
  { Scope span("test", "lost"); }
  const Status s = stop();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
  EXPECT_FALSE(active());
}

}  // namespace
}  // namespace ral::trace
