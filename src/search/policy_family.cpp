#include "search/policy_family.h"

#include <cmath>

#include "core/error.h"
#include "evict/window_params.h"

namespace kvs::search {

namespace {
constexpr double kGlobalLambda2 = -0.15;  // the paper's default Global setting
}

PolicyFamily::PolicyFamily(const std::string& name, int segments, int64_t budget)
    : name_(name), segments_(segments), budget_(budget) {
  if (name != "baseline" && name != "pyramid" && name != "global" && name != "segments" &&
      name != "curve")
    throw Error("unknown profile '" + name + "' (expected baseline, pyramid, global, segments or curve)");
  if (name == "segments" && segments < 1) throw Error("--segments must be at least 1");
  searched_ = name == "segments" || name == "curve";
}

std::vector<double> PolicyFamily::warm_start() const {
  const double a2 = std::asinh(kGlobalLambda2);
  if (name_ == "segments") {
    std::vector<double> latent(2 * static_cast<size_t>(segments_), 0.0);
    std::fill(latent.begin() + segments_, latent.end(), a2);
    return latent;
  }
  if (name_ == "curve") return {0.0, 0.0, 0.0, a2, 0.0, 0.0};
  return {};
}

evict::Policy PolicyFamily::policy(const std::vector<double>& latent) const {
  if (name_ == "baseline") return evict::snapkv_policy(budget_);
  if (name_ == "pyramid") return evict::pyramidkv_policy(budget_);
  evict::Policy p = evict::global_policy(budget_, 0.0, kGlobalLambda2);
  p.name = name_;
  if (!searched_) return p;
  if (latent.size() != warm_start().size())
    throw Error("profile " + name_ + ": latent vector of size " + std::to_string(latent.size()) +
                ", expected " + std::to_string(warm_start().size()));
  const size_t half = latent.size() / 2;
  const auto kind = name_ == "segments" ? evict::ProfileKind::Segments : evict::ProfileKind::Curve;
  const evict::WindowParams& w = evict::window_params();
  p.params.set(w.lambda1,
               evict::Profile::make(kind, {latent.begin(), latent.begin() + half}, "lambda1"));
  p.params.set(w.lambda2,
               evict::Profile::make(kind, {latent.begin() + half, latent.end()}, "lambda2"));
  return p;
}

}  // namespace kvs::search
