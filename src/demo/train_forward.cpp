#include "demo/train_forward.h"

#include "model/attention.h"
#include "model/layers.h"
#include "model/rope.h"

namespace kvs::demo {

PackedBatch pack_batch(const std::vector<TrainingSequence>& sequences) {
  PackedBatch batch;
  std::vector<int64_t> ids, predict_at, targets, context_at, context_targets;
  for (const auto& seq : sequences) {
    const auto offset = static_cast<int64_t>(ids.size());
    batch.offsets.push_back(offset);
    batch.lengths.push_back(static_cast<int64_t>(seq.ids.size()));
    batch.max_length = std::max(batch.max_length, batch.lengths.back());
    ids.insert(ids.end(), seq.ids.begin(), seq.ids.end());
    std::vector<bool> is_answer(seq.ids.size(), false);
    for (int64_t p : seq.answer_positions) {
      is_answer[static_cast<size_t>(p)] = true;
      predict_at.push_back(offset + p - 1);
      targets.push_back(seq.ids[static_cast<size_t>(p)]);
    }
    for (size_t p = 1; p < seq.ids.size(); ++p) {
      if (is_answer[p]) continue;
      context_at.push_back(offset + static_cast<int64_t>(p) - 1);
      context_targets.push_back(seq.ids[p]);
    }
  }
  batch.ids = at::tensor(ids, at::kLong);
  batch.predict_at = at::tensor(predict_at, at::kLong);
  batch.targets = at::tensor(targets, at::kLong);
  batch.context_at = at::tensor(context_at, at::kLong);
  batch.context_targets = at::tensor(context_targets, at::kLong);
  return batch;
}

at::Tensor final_hidden(const model::ModelConfig& c, const model::Weights& w,
                        const at::Tensor& inv_freq, const PackedBatch& batch) {
  const int64_t heads = c.num_attention_heads, kv_heads = c.num_key_value_heads, d = c.head_dim;
  const model::RopeTables rope =
      model::rope_tables(inv_freq, 0, batch.max_length, at::kFloat, at::kCPU);
  model::PrefillAttentionOptions attention;
  attention.sliding_window = c.sliding_window;
  at::Tensor x = at::embedding(w.embed, batch.ids);  // [tokens, hidden]
  for (const model::LayerWeights& lw : w.layers) {
    const at::Tensor h = model::rms_norm(x, lw.input_norm, c.rms_norm_eps);
    const at::Tensor q_all = at::linear(h, lw.q_proj);
    const at::Tensor k_all = at::linear(h, lw.k_proj);
    const at::Tensor v_all = at::linear(h, lw.v_proj);
    std::vector<at::Tensor> outputs;
    for (size_t s = 0; s < batch.offsets.size(); ++s) {
      const int64_t off = batch.offsets[s], n = batch.lengths[s];
      const model::RopeTables r{rope.cos.narrow(0, 0, n), rope.sin.narrow(0, 0, n)};
      const at::Tensor q =
          model::apply_rope(q_all.narrow(0, off, n).view({n, heads, d}).transpose(0, 1), r);
      const at::Tensor k =
          model::apply_rope(k_all.narrow(0, off, n).view({n, kv_heads, d}).transpose(0, 1), r);
      const at::Tensor v = v_all.narrow(0, off, n).view({n, kv_heads, d}).transpose(0, 1);
      const at::Tensor attn = model::prefill_attention(q.contiguous(), k.contiguous(),
                                                       v.contiguous(), attention);  // [heads, n, d]
      outputs.push_back(attn.transpose(0, 1).reshape({n, heads * d}));
    }
    x = x + at::linear(at::cat(outputs, 0), lw.o_proj);
    x = x + model::swiglu_mlp(model::rms_norm(x, lw.post_norm, c.rms_norm_eps), lw);
  }
  return x;
}

at::Tensor logits_at(const model::ModelConfig& c, const model::Weights& w, const at::Tensor& hidden,
                     const at::Tensor& positions) {
  return at::linear(model::rms_norm(hidden.index_select(0, positions), w.norm, c.rms_norm_eps),
                    w.lm_head);
}

at::Tensor answer_logits(const model::ModelConfig& c, const model::Weights& w,
                         const at::Tensor& inv_freq, const PackedBatch& batch) {
  return logits_at(c, w, final_hidden(c, w, inv_freq, batch), batch.predict_at);
}

}  // namespace kvs::demo
