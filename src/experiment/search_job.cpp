// A search job: one profile search on the dev split, recorded (and resumed) by run_search.
#include "core/strfmt.h"
#include "experiment/job_kinds.h"

namespace kvs::experiment {

JobOutcome run_search_job(const ExperimentSpec& spec, const Job& job, const JobSettings& settings) {
  const Evaluation& e = job.evaluations.at(0);
  const search::RunSummary s = search::run_search(method_request(spec, job, spec.method(e.method), e.budget, settings));
  JobOutcome outcome;
  outcome.key = job.key;
  outcome.prefills = s.prefills;
  outcome.policy_question_evaluations = s.prefills;
  outcome.summary = strfmt("%s: %d states (%d now), best dev %.2f, %lld prefills", job.key.c_str(),
                           s.evaluations, s.evaluated_now, s.best_dev_score,
                           static_cast<long long>(s.prefills));
  return outcome;
}

}  // namespace kvs::experiment
