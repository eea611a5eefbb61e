// A progress bar on stderr for long work: done/total, rate, ETA and a status text.
// Silent when stderr is not a terminal, except for a final summary line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kvs {

// "mm:ss", or "h:mm:ss" from an hour; "--:--" when negative or absurd.
std::string format_duration(double seconds);

class Progress {
 public:
  Progress(std::string label, int64_t total, std::string unit = "it");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(int64_t n = 1);
  void set_status(const std::string& status);  // e.g. "best dev 61.20"
  void finish();

 private:
  void draw(bool final);

  std::string label_;
  std::string unit_;
  std::string status_;
  int64_t total_;
  int64_t done_ = 0;
  bool finished_ = false;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace kvs
