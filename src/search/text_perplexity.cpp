#include "search/text_perplexity.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/timer.h"
#include "model/transformer.h"
#include "search/decode_time.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace kvs::search {

PerplexityResult text_perplexity(const PerplexityRequest& request) {
  std::vector<evict::Policy> policies = request.policies;
  if (!request.positions.empty()) {
    const evict::DecodePositions positions =
        evict::parse_decode_positions(request.positions, "--positions");
    for (evict::Policy& p : policies) {
      if (!p.decoding) {
        if (positions != evict::DecodePositions::Original)
          throw error_at("--positions", p.name +
                                            ": positions within the cache need a policy "
                                            "with a decoding schedule");
        continue;
      }
      p.decoding->positions = positions;
    }
    if (policies.empty() && positions != evict::DecodePositions::Original)
      throw error_at("--positions",
                     "positions within the cache need a policy with a decoding schedule");
  }
  for (const evict::Policy& p : policies) p.validate();
  if (request.block < 1) throw error_at("--block", "must be >= 1");
  const std::string text = tokenizer::read_utf8_text_file(request.text_path);
  const model::Transformer model = model::Transformer::load(request.model_dir, request.load);
  const std::unique_ptr<tokenizer::Tokenizer> tok = tokenizer::load_tokenizer(request.model_dir);
  std::vector<int32_t> ids = tokenizer::build_prompt_ids(*tok, text, tokenizer::ChatTemplate::None);
  if (request.max_tokens > 0 && int64_t(ids.size()) > request.max_tokens)
    ids.resize(size_t(request.max_tokens));
  if (ids.size() < 2)
    throw error_at(request.text_path, "has fewer than 2 tokens: nothing to predict");
  DecodeTimeOptions options;
  options.teacher.assign(ids.begin() + 1, ids.end());
  options.full_cache = policies.empty() || request.full_cache;
  Timer timer;
  const DecodeTimeResult out = decode_with_schedules(
      model, std::vector<int32_t>(ids.begin(), ids.begin() + 1), policies, options);
  PerplexityResult result;
  result.seconds = timer.seconds();
  result.tokens = int64_t(ids.size());
  for (size_t r = 0; r < out.rows.size(); ++r) {
    const DecodeTimeRow& row = out.rows[r];
    PerplexityRow p;
    if (r < policies.size()) p.policy = policies[r];
    p.name = p.policy ? p.policy->name : "full cache";
    p.token_nll = row.nll;
    p.nll = step_mean(row.nll);
    p.perplexity = std::exp(p.nll);
    p.largest_cache = p.policy ? row.largest_cache : int64_t(ids.size());
    for (double block_nll : block_means(row.nll, request.block))
      p.block_perplexity.push_back(std::exp(block_nll));
    p.compressions = row.compressions;
    result.rows.push_back(std::move(p));
  }
  return result;
}

}  // namespace kvs::search
