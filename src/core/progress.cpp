#include "core/progress.h"

#include <unistd.h>

#include <cstdio>

namespace kvs {

std::string format_duration(double s) {
  char buf[32];
  if (s < 0 || s > 1e7) return "--:--";
  const int total = static_cast<int>(s + 0.5);
  if (total >= 3600)
    std::snprintf(buf, sizeof buf, "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60);
  else
    std::snprintf(buf, sizeof buf, "%02d:%02d", total / 60, total % 60);
  return buf;
}

Progress::Progress(std::string label, int64_t total, std::string unit)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  if (tty_) draw(false);
}

Progress::~Progress() {
  if (!finished_) finish();
}

void Progress::advance(int64_t n) {
  done_ += n;
  const auto now = std::chrono::steady_clock::now();
  // A terminal gets a live bar; a log file (batch jobs) a line every half minute.
  const auto interval = tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(30000);
  if (now - last_draw_ > interval || (tty_ && done_ >= total_)) {
    last_draw_ = now;
    draw(false);
  }
}

void Progress::set_status(const std::string& status) { status_ = status; }

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  draw(true);
}

void Progress::draw(bool final) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? done_ / elapsed : 0.0;
  const double eta = rate > 0 ? (total_ - done_) / rate : -1.0;
  constexpr int kWidth = 24;
  const int filled = total_ > 0 ? static_cast<int>(kWidth * done_ / total_) : 0;
  std::string bar(static_cast<size_t>(filled < kWidth ? filled : kWidth), '#');
  bar.resize(kWidth, '.');
  char line[512];
  if (final) {
    std::snprintf(line, sizeof line, "%s: %lld/%lld %s in %s (%.2f %s/s)%s%s", label_.c_str(),
                  static_cast<long long>(done_), static_cast<long long>(total_), unit_.c_str(),
                  format_duration(elapsed).c_str(), rate, unit_.c_str(),
                  status_.empty() ? "" : ", ", status_.c_str());
  } else {
    std::snprintf(line, sizeof line, "%s [%s] %lld/%lld %.2f %s/s ETA %s%s%s", label_.c_str(),
                  bar.c_str(), static_cast<long long>(done_), static_cast<long long>(total_), rate,
                  unit_.c_str(), format_duration(eta).c_str(), status_.empty() ? "" : " | ",
                  status_.c_str());
  }
  if (tty_)
    std::fprintf(stderr, "\r\033[K%s%s", line, final ? "\n" : "");
  else
    std::fprintf(stderr, "%s\n", line);
  std::fflush(stderr);
}

}  // namespace kvs
