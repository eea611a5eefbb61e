#include "evict/profile.h"

#include <cmath>

#include "core/enum_names.h"
#include "core/error.h"
#include "core/strfmt.h"

namespace kvs::evict {

namespace {

const EnumName<ProfileKind> kProfileKinds[] = {
    {ProfileKind::Global, "global"}, {ProfileKind::Segments, "segments"}, {ProfileKind::Curve, "curve"}};

}  // namespace

const char* profile_kind_name(ProfileKind kind) { return enum_name(kind, kProfileKinds); }

ProfileKind parse_profile_kind(const std::string& name, const std::string& where) {
  return parse_enum(name, where, "profile", kProfileKinds);
}

Profile Profile::make(ProfileKind kind, std::vector<double> params, const std::string& where) {
  const size_t n = params.size();
  if (kind == ProfileKind::Global && n != 1) {
    throw error_at(where, strfmt("a global profile has 1 parameter, got %zu", n));
  }
  if (kind == ProfileKind::Curve && n != 3) {
    throw error_at(where, strfmt("a curve profile has 3 parameters (c0, c1, c2), got %zu", n));
  }
  if (kind == ProfileKind::Segments && n == 0) {
    throw error_at(where, "a segments profile needs at least 1 parameter");
  }
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(params[i])) {
      throw error_at(strfmt("%s[%zu]", where.c_str(), i), "parameter is not a finite number");
    }
  }
  return Profile(kind, std::move(params));
}

Profile Profile::global(double a) { return make(ProfileKind::Global, {a}, "global profile"); }

Profile Profile::segments(std::vector<double> a) {
  return make(ProfileKind::Segments, std::move(a), "segments profile");
}

Profile Profile::curve(double c0, double c1, double c2) {
  return make(ProfileKind::Curve, {c0, c1, c2}, "curve profile");
}

Profile Profile::with_param(size_t i, double value) const {
  if (i >= params_.size()) {
    throw Error(strfmt("%s profile: no parameter %zu (it has %zu)", profile_kind_name(kind_), i,
                       params_.size()));
  }
  std::vector<double> params = params_;
  params[i] = value;
  return make(kind_, std::move(params), profile_kind_name(kind_) + std::string(" profile"));
}

double Profile::a_at(int64_t layer, int64_t num_layers) const {
  if (num_layers < 1 || layer < 0 || layer >= num_layers) {
    throw Error(strfmt("profile: layer %lld is outside [0, %lld)", (long long)layer,
                       (long long)num_layers));
  }
  switch (kind_) {
    case ProfileKind::Global:
      return params_[0];
    case ProfileKind::Segments: {
      const int64_t n = static_cast<int64_t>(params_.size());
      return params_[static_cast<size_t>(layer * n / num_layers)];
    }
    case ProfileKind::Curve: {
      const double t = num_layers == 1 ? 0.0 : static_cast<double>(layer) / (num_layers - 1);
      return params_[0] + params_[1] * t + params_[2] * t * t;
    }
  }
  return 0;
}

double Profile::lambda_at(int64_t layer, int64_t num_layers) const {
  return std::sinh(a_at(layer, num_layers));
}

std::vector<double> Profile::lambdas(int64_t num_layers) const {
  std::vector<double> out;
  for (int64_t l = 0; l < num_layers; ++l) out.push_back(lambda_at(l, num_layers));
  return out;
}

}  // namespace kvs::evict
