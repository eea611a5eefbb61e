// A policy's decode-time schedule (the policy's "decoding" field): while the model writes, its
// cache is compressed every `interval` decoding steps down to `target` entries per KV head and
// layer, scored by the policy's method from the cache's keys and values and the queries of the
// last `buffer` decoding steps. The names map to kvpress's DecodingPress: interval is
// compression_interval, target is target_size, and buffer counts the query rows a compression
// reads, the current step's included (kvpress's hidden_states_buffer_size + 1: its buffer holds
// the steps before the current one, which it appends).
//   {"method": "knorm", "budget": 128, "decoding": {"interval": 64, "target": 512}}
//   {"method": "streaming_llm", "n_sink": 4, "decoding": {"interval": 1, "target": 256}}
// With a budget the prompt is compressed to B first (kvpress's PrefillDecodingPress); without one
// the prompt is kept whole until the first decode-time compression. By default a kept entry keeps
// the position it was written at (kvpress's default): RoPE continues from the tokens seen. With
// "positions": "cache" the positions are those within the cache (StreamingLLM's rolling positions,
// kvpress's KeyRerotationPress): each compression re-rotates the kept keys to their new indices
// and the next token takes the cache's length as its position, which lets a model run past its
// trained context.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace kvs::evict {

class Method;
struct Policy;

// Which RoPE positions a decode-time cache uses (see above).
enum class DecodePositions { Original, Cache };

struct DecodingSchedule {
  int64_t interval = 64;  // decoding steps between compressions (>= 1)
  // > 0: R-KV's trigger instead of the interval (its `divide_length`): a counter of every token
  // seen, the prompt included, compresses after the step that follows each multiple of it, and the
  // buffered queries roll on across compressions, starting with the prompt's last ones.
  int64_t divide_length = 0;
  int64_t target = 512;  // entries per KV head and layer after a compression
  int64_t buffer = 128;  // the last decoding steps' queries a compression reads (>= 1)
  DecodePositions positions = DecodePositions::Original;  // JSON "positions": original | cache

  // The steps between two compressions at steady state.
  int64_t period() const { return divide_length > 0 ? divide_length : interval; }
  // The entries a head may hold between compressions: target + period.
  int64_t bound() const { return target + period(); }
  // The query rows a compression at steady state reads: the steps since the last one, at most
  // buffer (R-KV's trigger: the buffer, which rolls on).
  int64_t query_rows() const {
    return divide_length > 0 ? buffer : interval < buffer ? interval : buffer;
  }
  bool operator==(const DecodingSchedule& o) const {
    return interval == o.interval && divide_length == o.divide_length && target == o.target &&
           buffer == o.buffer && positions == o.positions;
  }
};

// Reads the "decoding" object; errors name "<where>.<field>".
DecodingSchedule decoding_from_json(const nlohmann::json& value, const std::string& where);
nlohmann::json decoding_to_json(const DecodingSchedule& schedule);
// "original" | "cache"; parse_decode_positions throws kvs::Error naming `where`.
const char* decode_positions_name(DecodePositions positions);
DecodePositions parse_decode_positions(const std::string& text, const std::string& where);

// Why the policy's method cannot compress while decoding, or "" when it can. The decode-time cache
// scores what a step shows (the cache's keys and values, the buffered queries): methods that need
// every prompt query's attention, move budgets between layers once every layer is seen, or keep a
// cache per query head are refused with the reason. Head-wise methods (adakv, mixkv on its adakv
// host) compress while decoding: each KV head is scored over the entries it holds.
std::string decoding_refusal(const Policy& policy);

// Throws kvs::Error "<where>.decoding.<field>: ..." when the schedule does not suit the policy
// (a refused method, a target below what it always keeps, too few query rows for its window).
void check_decoding(const Policy& policy, const DecodingSchedule& schedule,
                    const std::string& where);

}  // namespace kvs::evict
