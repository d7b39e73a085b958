// `mlaspec tokenize`: encode text to ids (or decode ids to text) with a Hugging Face
// tokenizer.json, time encode throughput (--bench), or encode many texts given as hex lines
// (--hex-lines, the live comparison with `tokenizers`).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/tokenizer/tokenizer.h"
#include "tools/chat_prompt.h"
#include "tools/commands.h"

namespace mlaspec::tools {
namespace {

using tokenizer::Tokenizer;

struct TokenizeCli {
  std::string tokenizer;
  std::string text;
  std::string file;
  std::string hex_lines;
  bool decode = false;
  bool stream = false;
  bool no_special = false;
  bool skip_special = false;
  bool bench = false;
  bool chat = false;
  double bench_seconds = 2.0;
  size_t bench_chunk = 4096;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(not_found("cannot open " + path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string input_text(const TokenizeCli& cli) {
  if (!cli.file.empty()) return read_all(cli.file);
  return cli.text;
}

std::string from_hex(const std::string& hex) {
  if (hex.size() % 2) throw Error(invalid_argument("--hex-lines: odd-length line"));
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

void print_ids(const std::vector<int32_t>& ids) {
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ' ';
    line += std::to_string(ids[i]);
  }
  std::printf("%s\n", line.c_str());
}

// The benchmark's documents: the text cut after the first newline at or past `chunk` bytes from
// the chunk's start (bench_tokenizers.py cuts the same way); chunk 0 keeps it whole.
std::vector<std::string_view> chunks(const std::string& text, size_t chunk) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.size();
    if (chunk && start + chunk < text.size()) {
      const size_t nl = text.find('\n', start + chunk);
      if (nl != std::string::npos) end = nl + 1;
    }
    out.push_back(std::string_view(text).substr(start, end - start));
    start = end;
  }
  return out;
}

void run_bench(const Tokenizer& tok, const std::string& text, const TokenizeCli& cli) {
  const tokenizer::EncodeOptions opts{.add_special_tokens = !cli.no_special,
                                      .invalid_utf8 = tokenizer::InvalidUtf8::kReplace};
  using clock = std::chrono::steady_clock;
  const double mb = static_cast<double>(text.size()) / 1e6;
  const std::vector<std::string_view> docs = chunks(text, cli.bench_chunk);
  size_t num_ids = 0;
  auto pass = [&] {
    num_ids = 0;
    const auto t0 = clock::now();
    for (const std::string_view doc : docs) {
      auto ids = tok.encode(doc, opts);
      throw_if_error(ids.status());
      num_ids += ids->size();
    }
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  const double cold = pass();
  std::vector<double> times;
  const auto start = clock::now();
  while (times.size() < 3 ||
         std::chrono::duration<double>(clock::now() - start).count() < cli.bench_seconds) {
    times.push_back(pass());
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf(
      "mlaspec encode: %.2f MB in %zu documents, %zu ids, one thread: first pass %.1f MB/s, "
      "median of %zu passes %.1f MB/s\n",
      mb, docs.size(), num_ids, mb / cold, times.size(), mb / median);
}

void run_tokenize(const TokenizeCli& cli) {
  auto tok = Tokenizer::from_path(cli.tokenizer);
  throw_if_error(tok.status());
  if (!cli.hex_lines.empty()) {
    std::istringstream in(read_all(cli.hex_lines));
    std::string line;
    while (std::getline(in, line)) {
      auto ids = tok->encode(from_hex(line), {.add_special_tokens = !cli.no_special,
                                              .invalid_utf8 = tokenizer::InvalidUtf8::kReplace});
      throw_if_error(ids.status());
      print_ids(*ids);
    }
    return;
  }
  const std::string text = input_text(cli);
  if (cli.bench) {
    run_bench(*tok, text, cli);
    return;
  }
  if (cli.decode) {
    std::vector<int32_t> ids;
    std::istringstream in(text);
    long long v = 0;
    while (in >> v) ids.push_back(static_cast<int32_t>(v));
    if (!in.eof()) throw Error(invalid_argument("--decode: input is not whitespace-separated ids"));
    const tokenizer::DecodeOptions opts{.skip_special_tokens = cli.skip_special};
    if (cli.stream) {
      tokenizer::StreamDecoder stream(*tok, opts);
      for (const int32_t id : ids) {
        auto piece = stream.push(id);
        throw_if_error(piece.status());
        std::fwrite(piece->data(), 1, piece->size(), stdout);
        std::fflush(stdout);
      }
      auto rest = stream.flush();
      throw_if_error(rest.status());
      std::fwrite(rest->data(), 1, rest->size(), stdout);
      std::printf("\n");
      return;
    }
    auto out = tok->decode(ids, opts);
    throw_if_error(out.status());
    std::printf("%s\n", out->c_str());
    return;
  }
  if (cli.chat) {
    // The template writes BOS itself: encode without the post-processor's.
    auto ids = tok->encode(chat_prompt(cli.tokenizer, text), {.add_special_tokens = false});
    throw_if_error(ids.status());
    print_ids(*ids);
    return;
  }
  auto ids = tok->encode(text, {.add_special_tokens = !cli.no_special});
  throw_if_error(ids.status());
  print_ids(*ids);
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto cli = std::make_shared<TokenizeCli>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "Encode text to token ids with a Hugging Face tokenizer.json (ids on one line), or decode "
      "ids back to text; --bench times encode throughput on one thread.");
  cmd->add_option("--tokenizer", cli->tokenizer, "tokenizer.json, or a model dir holding one")
      ->required();
  auto* text = cmd->add_option("--text", cli->text, "Text to encode (ids to decode with --decode)");
  auto* file = cmd->add_option("--file", cli->file, "Read the text (or ids) from this file");
  auto* hex = cmd->add_option("--hex-lines", cli->hex_lines,
                              "File of hex-encoded byte strings, one per line: print the ids of "
                              "each (invalid UTF-8 encoded as U+FFFD)");
  text->excludes(file);
  hex->excludes(text)->excludes(file);
  auto* decode = cmd->add_flag("--decode", cli->decode, "Input is ids; print their text");
  auto* stream = cmd->add_flag("--stream", cli->stream,
                               "With --decode: decode id by id through the streaming decoder")
                     ->needs(decode);
  cmd->add_flag("--no-special", cli->no_special,
                "Encode without the post-processor's special tokens (BOS)");
  auto* skip_special =
      cmd->add_flag("--skip-special", cli->skip_special, "Decode without special tokens")
          ->needs(decode);
  auto* bench = cmd->add_flag("--bench", cli->bench,
                              "Time encode of --file/--text: MB/s, one thread, first pass (cold "
                              "word cache) and the median of repeated passes");
  bench->excludes(decode);
  auto* chat = cmd->add_flag("--chat", cli->chat,
                             "Encode the text as one user message in the model's chat format "
                             "(--tokenizer DIR's tokenizer_config.json chat_template, with the "
                             "generation prompt; no post-processor BOS: the template writes it)");
  chat->excludes(decode)->excludes(bench)->excludes(hex);
  cmd->add_option("--bench-chunk", cli->bench_chunk,
                  "For --bench: encode the text as documents cut at the first newline past this "
                  "many bytes (0: one encode of the whole text)")
      ->capture_default_str()
      ->needs(bench);
  cmd->add_option("--bench-seconds", cli->bench_seconds, "Seconds of repeated passes for --bench")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str()
      ->needs(bench);
  // --hex-lines encodes each line and nothing else: the decode and bench options are refused
  // beside it rather than ignored.
  hex->excludes(decode)->excludes(stream)->excludes(skip_special)->excludes(bench);
  cmd->callback([cli] { run_tokenize(*cli); });
}

}  // namespace mlaspec::tools
