// The policies `kvsearch run --profile F` evaluates: the fixed baselines and Global setting, and
// the searched families whose latent vector is the a-space parameters of the lambda1 profile
// followed by those of the lambda2 profile.
#pragma once

#include <string>
#include <vector>

#include "evict/policy.h"

namespace kvs::search {

class PolicyFamily {
 public:
  // name: baseline | pyramid | global | segments | curve; segments: n for Segments(n).
  PolicyFamily(const std::string& name, int segments, int64_t budget);

  const std::string& name() const { return name_; }
  bool searched() const { return searched_; }
  int segments() const { return name_ == "segments" ? segments_ : 0; }
  // The warm start (the Global setting lambda1 = 0, lambda2 = -0.15 in the family's shape); empty
  // for the fixed policies.
  std::vector<double> warm_start() const;
  // The fixed policy, or the searched family's policy at a latent vector.
  evict::Policy policy(const std::vector<double>& latent = {}) const;

 private:
  std::string name_;
  int segments_;
  int64_t budget_;
  bool searched_;
};

}  // namespace kvs::search
