#include "demo/trainer.h"

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "demo/model_init.h"
#include "demo/train_forward.h"
#include "demo/training_data.h"
#include "model/rope.h"

namespace kvs::demo {

namespace {

double learning_rate_at(const TrainOptions& o, int64_t step) {
  if (step < o.warmup_steps) return o.learning_rate * static_cast<double>(step + 1) / o.warmup_steps;
  const double t = static_cast<double>(step - o.warmup_steps) /
                   static_cast<double>(std::max<int64_t>(1, o.steps - o.warmup_steps));
  const double cosine = 0.5 * (1.0 + std::cos(M_PI * std::min(1.0, t)));
  return o.learning_rate * (o.final_lr_ratio + (1.0 - o.final_lr_ratio) * cosine);
}

// % of sequences whose answer tokens are all the argmax (teacher-forced), one sequence at a time.
double exact_match(const model::ModelConfig& config, const model::Weights& weights,
                   const at::Tensor& inv_freq, const std::vector<TrainingSequence>& sequences) {
  at::NoGradGuard no_grad;
  int64_t correct = 0;
  for (const auto& seq : sequences) {
    const PackedBatch batch = pack_batch({seq});
    const at::Tensor logits = answer_logits(config, weights, inv_freq, batch);
    if (logits.argmax(-1).eq(batch.targets).all().item<bool>()) ++correct;
  }
  return 100.0 * static_cast<double>(correct) / static_cast<double>(sequences.size());
}

model::Weights detached(const model::Weights& w) {
  model::Weights out;
  auto copy = [](const at::Tensor& t) { return t.detach().clone(); };
  out.embed = copy(w.embed);
  for (const auto& lw : w.layers)
    out.layers.push_back({copy(lw.input_norm), copy(lw.q_proj), copy(lw.k_proj), copy(lw.v_proj),
                          copy(lw.o_proj), copy(lw.post_norm), copy(lw.gate_proj), copy(lw.up_proj),
                          copy(lw.down_proj)});
  out.norm = copy(w.norm);
  out.lm_head = copy(w.lm_head);
  return out;
}

}  // namespace

TrainResult train_demo_model(const model::ModelConfig& config, const tokenizer::Tokenizer& tok,
                             const TrainOptions& options) {
  if (options.steps < 1) throw Error("demo train: --steps must be positive");
  if (options.warmup_steps < 1) throw Error("demo train: warm-up must be at least one step");
  const auto start = std::chrono::steady_clock::now();
  const model::Weights weights = init_weights(config, options.seed);
  const at::Tensor inv_freq = model::rope_inverse_frequencies(config);

  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decayed_parameters(weights),
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(options.learning_rate)
                              .betas({0.9, 0.95})
                              .weight_decay(options.weight_decay)));
  groups.emplace_back(undecayed_parameters(weights),
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(options.learning_rate)
                              .betas({0.9, 0.95})
                              .weight_decay(0.0)));
  torch::optim::AdamW optimizer(std::move(groups));
  std::vector<at::Tensor> all_params = decayed_parameters(weights);
  for (const auto& p : undecayed_parameters(weights)) all_params.push_back(p);

  const std::vector<CurriculumStage>& curriculum = options.curriculum;
  TrainingSampler sampler(tok, curriculum, options.seed, options.tokens_per_step,
                          options.passage_percent);
  const std::vector<TrainingSequence> check_passage = record_shaped_sequences(
      demo_task("demo_passage_retrieval"), tok, options.check_examples, options.seed + 101);
  const std::vector<TrainingSequence> check_kv = record_shaped_sequences(
      demo_task("demo_kv_recall"), tok, options.check_examples, options.seed + 202);

  TrainResult result;
  Progress progress("demo train", options.steps, "step");
  double window_loss = 0;
  int64_t window_steps = 0;
  for (int64_t step = 0; step < options.steps; ++step) {
    const double fraction = static_cast<double>(step) / static_cast<double>(options.steps);
    const auto stage = static_cast<int64_t>(stage_index(curriculum, fraction));
    const std::vector<TrainingSequence> sequences = sampler.next_batch(fraction);
    const PackedBatch batch = pack_batch(sequences);
    result.tokens_seen += batch.ids.size(0);

    const double lr = learning_rate_at(options, step);
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    optimizer.zero_grad();
    const at::Tensor hidden = final_hidden(config, weights, inv_freq, batch);
    const at::Tensor loss =
        at::cross_entropy_loss(logits_at(config, weights, hidden, batch.predict_at), batch.targets);
    at::Tensor objective = loss;
    if (options.context_loss_weight > 0 && batch.context_at.numel() > 0)
      objective = objective + options.context_loss_weight *
                                  at::cross_entropy_loss(logits_at(config, weights, hidden, batch.context_at),
                                                         batch.context_targets);
    objective.backward();
    torch::nn::utils::clip_grad_norm_(all_params, options.grad_clip);
    optimizer.step();

    const double value = loss.item<double>();
    if (!std::isfinite(value))
      throw Error(strfmt("demo train: the loss diverged at step %lld (lower --lr)",
                         static_cast<long long>(step)));
    window_loss += value;
    ++window_steps;
    if (window_steps == options.log_every || step + 1 == options.steps) {
      result.losses.push_back({step + 1, stage, window_loss / window_steps});
      window_loss = 0;
      window_steps = 0;
    }
    std::string status = strfmt("stage %lld loss %.3f", static_cast<long long>(stage),
                                result.losses.empty() ? value : result.losses.back().loss);
    if (options.check_every > 0 &&
        ((step + 1) % options.check_every == 0 || step + 1 == options.steps)) {
      const CheckPoint check{step + 1, exact_match(config, weights, inv_freq, check_passage),
                             exact_match(config, weights, inv_freq, check_kv)};
      result.checks.push_back(check);
      log::info(strfmt("step %lld: loss %.4f, teacher-forced exact match on record-shaped "
                       "examples: passage %.1f%%, kv %.1f%%",
                       static_cast<long long>(step + 1), result.losses.back().loss,
                       check.passage_exact, check.kv_exact));
    }
    if (!result.checks.empty())
      status += strfmt(" check %.0f%%/%.0f%%", result.checks.back().passage_exact,
                       result.checks.back().kv_exact);
    progress.set_status(status);
    progress.advance();
  }
  progress.finish();
  result.weights = detached(weights);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kvs::demo
