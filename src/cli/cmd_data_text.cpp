// kvsearch data text: long texts for bounded-cache perplexity (`perplexity --text`): the user's
// files, or by default the King James Version, one text per book (longbench/long_texts.h); also
// declared as a perplexity and a fidelity dataset for experiments and `kvsearch run`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "longbench/long_texts.h"

namespace {

void setup_data_text(CLI::App& parent) {
  auto o = std::make_shared<kvs::longbench::LongTextOptions>();
  auto* cmd = parent.add_subcommand(
      "text",
      "Write long texts for `perplexity --text`: your files, or the King James Version by book");
  cmd->add_option("files", o->files,
                  "UTF-8 text files (PG19's books, say), each a text named after its file; none: "
                  "the King James Version (public domain), one text per book, from Debian's "
                  "bible-kjv-text");
  cmd->add_option(
         "--out", o->out_dir,
         "Output directory (<name>.txt, texts.json; data/ and config/ of the text datasets)")
      ->required();
  cmd->add_option("--name", o->name,
                  "Stem of the text datasets <name>_perplexity and <name>_fidelity (default: kjv "
                  "for the default text, texts for your files)");
  auto perplexity = std::make_shared<std::string>();
  auto fidelity = std::make_shared<std::string>();
  cmd->add_option(
      "--perplexity", *perplexity,
      "PROMPT,FED: the perplexity dataset reads each text's first PROMPT tokens as the "
      "prompt and the next FED under the policy (default 1,2047; without the flag, left "
      "out where no text has PROMPT + FED words)");
  cmd->add_option(
      "--fidelity", *fidelity,
      "PROMPT,FED: the fidelity dataset's prompt, then FED steps of the full cache's own "
      "continuation (default 512,512, likewise)");
  cmd->add_option("--dev", o->dev,
                  "Texts of each dataset in its dev split (searches tune on them; fewer than the "
                  "dataset's texts)")
      ->capture_default_str();
  cmd->callback([o, perplexity, fidelity] {
    if (!perplexity->empty())
      o->perplexity = kvs::longbench::parse_text_reading(*perplexity, "--perplexity");
    if (!fidelity->empty())
      o->fidelity = kvs::longbench::parse_text_reading(*fidelity, "--fidelity");
    const kvs::longbench::LongTexts written = kvs::longbench::write_long_texts(*o);
    for (const auto& t : written.texts)
      std::printf("%s: %lld words, %lld bytes\n", t.path.c_str(), static_cast<long long>(t.words),
                  static_cast<long long>(t.bytes));
    std::printf("%s/texts.json: source, licence and SHA-256 of each text\n", o->out_dir.c_str());
    for (const auto& d : written.datasets)
      std::printf(
          "%s: %lld texts of at least %lld words, %lld of them dev (%lld prompt tokens, %lld "
          "fed)\n",
          d.path.c_str(), static_cast<long long>(d.texts),
          static_cast<long long>(d.reading.prompt + d.reading.fed), static_cast<long long>(d.dev),
          static_cast<long long>(d.reading.prompt), static_cast<long long>(d.reading.fed));
  });
}

const kvs::cli::CommandRegistration data_text_registration("data text", setup_data_text);

}  // namespace
