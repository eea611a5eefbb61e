// Layer profiles of one score coefficient (lambda1 or lambda2): latent parameters a in "a-space",
// lambda(l) = sinh(a(l)), so that search steps of fixed size in a are small near 0 and grow for
// large coefficients (docs/reference.md §1). Torch-free.
//   Global:      a(l) = a0
//   Segments(n): a(l) = a_s with s = floor(l * n / L) (n contiguous depth segments)
//   Curve:       a(l) = c0 + c1 t + c2 t^2 with t = l / (L - 1)
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace kvs::evict {

enum class ProfileKind { Global, Segments, Curve };

const char* profile_kind_name(ProfileKind kind);  // "global" | "segments" | "curve"
ProfileKind parse_profile_kind(const std::string& name, const std::string& where);

class Profile {
 public:
  static Profile global(double a);
  static Profile global_lambda(double lambda) { return global(std::asinh(lambda)); }
  static Profile segments(std::vector<double> a);  // one value per segment, shallow first
  static Profile curve(double c0, double c1, double c2);
  // Checks the parameter count of the kind and that every value is finite.
  static Profile make(ProfileKind kind, std::vector<double> params, const std::string& where);

  ProfileKind kind() const { return kind_; }
  const std::vector<double>& params() const { return params_; }
  // A copy with parameter i replaced (the coordinate moves of the search).
  Profile with_param(size_t i, double value) const;

  double a_at(int64_t layer, int64_t num_layers) const;
  double lambda_at(int64_t layer, int64_t num_layers) const;
  // lambda_at of every layer, shallow first.
  std::vector<double> lambdas(int64_t num_layers) const;

  bool operator==(const Profile& other) const {
    return kind_ == other.kind_ && params_ == other.params_;
  }
  bool operator!=(const Profile& other) const { return !(*this == other); }

 private:
  Profile(ProfileKind kind, std::vector<double> params) : kind_(kind), params_(std::move(params)) {}

  ProfileKind kind_;
  std::vector<double> params_;
};

}  // namespace kvs::evict
