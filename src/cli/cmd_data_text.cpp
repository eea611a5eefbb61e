// kvsearch data text: long texts for bounded-cache perplexity (`perplexity --text`): the user's
// files, or by default the King James Version, one text per book (longbench/long_texts.h).
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
  cmd->add_option("--out", o->out_dir, "Output directory (<name>.txt, texts.json)")->required();
  cmd->callback([o] {
    for (const auto& t : kvs::longbench::write_long_texts(*o))
      std::printf("%s: %lld words, %lld bytes\n", t.path.c_str(), static_cast<long long>(t.words),
                  static_cast<long long>(t.bytes));
    std::printf("%s/texts.json: source, licence and SHA-256 of each text\n", o->out_dir.c_str());
  });
}

const kvs::cli::CommandRegistration data_text_registration("data text", setup_data_text);

}  // namespace
