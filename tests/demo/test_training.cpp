#include <gtest/gtest.h>

#include <ATen/core/grad_mode.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "core/error.h"
#include "demo/model_init.h"
#include "demo/tasks.h"
#include "demo/tokenizer_training.h"
#include "demo/train_forward.h"
#include "demo/trainer.h"
#include "demo/training_data.h"
#include "model/rope.h"
#include "model/transformer.h"

namespace kvs::demo {
namespace {

namespace fs = std::filesystem;

// One small tokenizer for the whole suite (training it takes a few seconds).
const tokenizer::Tokenizer& test_tokenizer() {
  static const std::unique_ptr<tokenizer::Tokenizer> tok = [] {
    const fs::path path =
        fs::temp_directory_path() / ("kvs_demo_tok_" + std::to_string(::getpid()) + ".model");
    TokenizerTrainingOptions o;
    o.model_path = path.string();
    o.vocab_size = 1200;
    o.corpus_examples = 30;
    train_demo_tokenizer(o);
    auto loaded = tokenizer::load_sentencepiece(path.string());
    fs::remove(path);
    return loaded;
  }();
  return *tok;
}

TEST(DemoTokenizer, MistralSpecialIdsAndRoundTrips) {
  const auto& tok = test_tokenizer();
  EXPECT_EQ(tok.vocab_size(), 1200);
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_EQ(tok.eos_ids(), std::vector<int32_t>{2});
  EXPECT_EQ(tok.decode(tok.encode("zedi zave 17.")), "zedi zave 17.");
  EXPECT_EQ(tok.decode(tok.encode("Which paragraph: x\nz")), "Which paragraph: x\nz");
}

TEST(DemoTraining, SequencesMarkExactlyTheAnswerTokens) {
  const auto& tok = test_tokenizer();
  const DemoTask& task = demo_task("demo_passage_retrieval");
  std::mt19937_64 gen(1);
  const TaskInstance instance = task.generate(demo_lexicon(), TaskShape{3, 5, 2}, gen);
  const TrainingSequence seq = encode_training_sequence(task, instance, tok);
  EXPECT_EQ(seq.ids.front(), tok.bos_id());
  // The prompt prefix is what the runner sees: BOS + the filled template.
  const auto prompt = tok.encode(task.prefix + instance.context + task.question_text(instance.questions[0]));
  ASSERT_GT(seq.ids.size(), prompt.size());
  EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), seq.ids.begin() + 1));
  std::vector<int32_t> answers;
  for (int64_t p : seq.answer_positions) answers.push_back(seq.ids[static_cast<size_t>(p)]);
  // The trained completions: the span's last word, then "k." for the paragraph the gold answer
  // "Paragraph k" names.
  const std::string& span = instance.questions[0];
  EXPECT_EQ(span.substr(span.rfind(' ') + 1) + " " + instance.answers[0].substr(10) + ".",
            instance.completions[0]);
  std::vector<int32_t> expected = tok.encode(instance.completions[0]);
  expected.push_back(2);
  const auto second = tok.encode(instance.completions[1]);
  expected.insert(expected.end(), second.begin(), second.end());
  expected.push_back(2);
  EXPECT_EQ(answers, expected);
  EXPECT_EQ(seq.answer_positions.front(), static_cast<int64_t>(prompt.size()) + 1);
}

TEST(DemoTraining, CopySequencesSuperviseTheRepeatOverTheLexiconsFirstWords) {
  const auto& tok = test_tokenizer();
  std::mt19937_64 gen(3);
  const CopyShape shape{100, 16, 5, 10};
  const std::set<std::string> allowed(demo_lexicon().begin(), demo_lexicon().begin() + 16);
  for (int i = 0; i < 20; ++i) {
    const TrainingSequence seq = make_copy_sequence(shape, tok, gen);
    ASSERT_EQ(seq.ids.front(), tok.bos_id());
    ASSERT_FALSE(seq.answer_positions.empty());
    // The answer is the rest of the sequence: the repeated text and EOS.
    const auto first = static_cast<size_t>(seq.answer_positions.front());
    for (size_t k = 0; k < seq.answer_positions.size(); ++k)
      EXPECT_EQ(seq.answer_positions[k], static_cast<int64_t>(first + k));
    EXPECT_EQ(seq.answer_positions.back() + 1, static_cast<int64_t>(seq.ids.size()));
    EXPECT_EQ(seq.ids.back(), 2);
    const std::vector<int32_t> repeat(seq.ids.begin() + static_cast<std::ptrdiff_t>(first), seq.ids.end() - 1);
    const std::string text = tok.decode(repeat);
    EXPECT_EQ(tok.decode(std::vector<int32_t>(seq.ids.begin() + 1, seq.ids.begin() + static_cast<std::ptrdiff_t>(first))),
              text + "\n");
    std::istringstream words(text);
    int64_t count = 0;
    for (std::string w; words >> w; ++count) EXPECT_TRUE(allowed.count(w)) << w;
    EXPECT_GE(count, 5);
    EXPECT_LE(count, 10);
  }
  EXPECT_THROW(make_copy_sequence(CopyShape{100, 385, 5, 10}, tok, gen), Error);
  EXPECT_THROW(make_copy_sequence(CopyShape{100, 16, 0, 10}, tok, gen), Error);
}

TEST(DemoTraining, TheCurriculumCopiesFirstThenGrowsToTheRecordsShape) {
  const std::vector<CurriculumStage> stages = default_curriculum();
  ASSERT_FALSE(stages.empty());
  EXPECT_EQ(stages.front().copy.percent, 100u);
  EXPECT_EQ(stages.back().until, 1.0);
  EXPECT_LT(stages.back().copy.percent, 100u);
  // The last stage asks the tasks at the records' own shape.
  EXPECT_EQ(stages.back().passage.min_items, demo_task("demo_passage_retrieval").record_shape.min_items);
  EXPECT_EQ(stages.back().passage.max_items, demo_task("demo_passage_retrieval").record_shape.max_items);
  for (size_t i = 1; i < stages.size(); ++i) {
    EXPECT_GT(stages[i].until, stages[i - 1].until);
    EXPECT_GE(stages[i].copy.lexicon_words, stages[i - 1].copy.lexicon_words);
  }
  EXPECT_EQ(stage_index(stages, 0.0), 0u);
  EXPECT_EQ(stage_index(stages, 1.0), stages.size() - 1);
}

model::Weights detached_copy(const model::Weights& w) {
  model::Weights out;
  auto c = [](const at::Tensor& t) { return t.detach().clone(); };
  out.embed = c(w.embed);
  for (const auto& l : w.layers)
    out.layers.push_back({c(l.input_norm), c(l.q_proj), c(l.k_proj), c(l.v_proj), c(l.o_proj),
                          c(l.post_norm), c(l.gate_proj), c(l.up_proj), c(l.down_proj)});
  out.norm = c(w.norm);
  out.lm_head = c(w.lm_head);
  return out;
}

TEST(DemoTraining, TrainingForwardIsTheRunnersForward) {
  ModelShape shape;
  shape.layers = 2;
  shape.hidden = 64;
  shape.heads = 4;
  shape.head_dim = 16;
  shape.kv_heads = 2;
  shape.intermediate = 96;
  const model::ModelConfig config = demo_model_config(shape, 300, 1, 2);
  model::Weights weights = init_weights(config, 5);
  {  // Non-trivial norms, so a misplaced norm weight would show.
    at::NoGradGuard g;
    for (auto& l : weights.layers) l.post_norm.mul_(at::rand({64}) + 0.5);
  }
  std::vector<TrainingSequence> seqs(2);
  std::mt19937_64 gen(2);
  for (auto& s : seqs) {
    for (int i = 0; i < 37 + static_cast<int>(seqs.size()) * 11; ++i)
      s.ids.push_back(static_cast<int32_t>(3 + gen() % 290));
    for (int64_t p = 1; p < static_cast<int64_t>(s.ids.size()); p += 3) s.answer_positions.push_back(p);
  }
  seqs[1].ids.resize(25);
  seqs[1].answer_positions = {5, 24};
  const PackedBatch batch = pack_batch(seqs);
  const at::Tensor logits =
      answer_logits(config, weights, model::rope_inverse_frequencies(config), batch).detach();

  const model::Transformer runner(config, detached_copy(weights));
  int64_t row = 0;
  for (const auto& s : seqs) {
    model::PrefillOptions o;
    o.all_logits = true;
    o.keep_cache = false;
    const at::Tensor all = runner.prefill(s.ids, o).logits;
    for (int64_t p : s.answer_positions) {
      EXPECT_TRUE(at::allclose(logits[row], all[p - 1], 1e-4, 1e-5)) << "position " << p;
      ++row;
    }
  }
  EXPECT_EQ(row, logits.size(0));
}

// A short run of a small model: copying over a few words and short contexts, which a few steps
// already improve.
TrainResult short_run(int64_t steps, uint64_t seed) {
  const auto& tok = test_tokenizer();
  ModelShape shape;
  shape.layers = 2;
  shape.hidden = 64;
  shape.heads = 4;
  shape.head_dim = 16;
  shape.kv_heads = 2;
  shape.intermediate = 128;
  const model::ModelConfig config = demo_model_config(shape, tok.vocab_size(), 1, 2);
  TrainOptions o;
  o.steps = steps;
  o.seed = seed;
  o.tokens_per_step = 256;
  o.learning_rate = 3e-3;
  o.warmup_steps = 5;
  o.log_every = 10;
  o.check_every = 0;
  o.curriculum = {{1.0, CopyShape{50, 16, 5, 10}, TaskShape{2, 4, 4}, TaskShape{4, 8, 4}}};
  return train_demo_model(config, tok, o);
}

TEST(DemoTraining, AShortRunLowersTheLoss) {
  const TrainResult result = short_run(40, 1);
  ASSERT_EQ(result.losses.size(), 4u);
  EXPECT_EQ(result.losses.back().step, 40);
  EXPECT_LT(result.losses.back().loss, 0.8 * result.losses.front().loss)
      << "first window " << result.losses.front().loss << ", last " << result.losses.back().loss;
  EXPECT_FALSE(result.weights.embed.requires_grad());
}

// The seed decides everything: initial weights, the data drawn, hence the trained weights.
TEST(DemoTraining, TheSameSeedTrainsTheSameWeights) {
  const TrainResult a = short_run(10, 7), b = short_run(10, 7), c = short_run(10, 8);
  EXPECT_TRUE(a.weights.embed.equal(b.weights.embed));
  EXPECT_TRUE(a.weights.lm_head.equal(b.weights.lm_head));
  EXPECT_TRUE(a.weights.layers.back().down_proj.equal(b.weights.layers.back().down_proj));
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (size_t i = 0; i < a.losses.size(); ++i) EXPECT_EQ(a.losses[i].loss, b.losses[i].loss) << "window " << i;
  EXPECT_FALSE(a.weights.embed.equal(c.weights.embed));
}

}  // namespace
}  // namespace kvs::demo
