// The two kinds of job behind run_job (private to src/experiment): what each does once its
// database, experiment and job rows are open.
#pragma once

#include "experiment/job.h"
#include "search/run.h"
#include "store/store.h"

namespace kvs::experiment {

// What every run of `job` shares: model, data, split, prompt rules, database and the job's key.
search::RunRequest job_request(const ExperimentSpec& spec, const Job& job, const JobSettings& settings);

// The RunRequest of `method` at `budget` on the job's dataset, owned by `job`.
search::RunRequest method_request(const ExperimentSpec& spec, const Job& job, const MethodSpec& method,
                                  int64_t budget, const JobSettings& settings);

// The search of a search job (resumable state by state).
JobOutcome run_search_job(const ExperimentSpec& spec, const Job& job, const JobSettings& settings);

// The fixed and transferred policies and the test replays of an evaluate job, all on one prefill
// per question.
JobOutcome run_evaluate_job(const ExperimentSpec& spec, const Job& job, const JobSettings& settings,
                            store::Store& db);

}  // namespace kvs::experiment
