// StopStringFilter: generated text as it streams, held back while it could still become a stop
// string, so a stop string is never released, even in part (docs/spec.md, "Engine": stop strings
// are the caller's). `generate` prints what it releases; `serve` sends it to the client.
//
//   StopStringFilter f({"\n\n", "####"});
//   bool stop = f.add(piece);          // piece: whole UTF-8 characters (tokenizer::StreamDecoder)
//   std::string out = f.take();        // released text since the last take()
//   ...
//   f.finish();                        // at the end: release what was held back
#pragma once

#include <string>
#include <vector>

namespace mlaspec::spec {

class StopStringFilter {
 public:
  // Empty stop strings are the caller's to refuse; they are ignored here.
  explicit StopStringFilter(std::vector<std::string> stops);

  // Adds text; true when a stop string has appeared: the text is then cut before it and all of
  // it released. Text is released on UTF-8 character boundaries only.
  bool add(const std::string& piece);
  // Releases everything held back (the request ended without a stop string).
  void finish();
  // The text released since the previous take().
  std::string take();

  // All text kept so far (released or not), cut before a stop string once one appeared.
  const std::string& text() const { return text_; }
  bool stopped() const { return stopped_; }

 private:
  void release(size_t upto);
  std::vector<std::string> stops_;
  size_t hold_ = 0;  // longest stop string - 1: what a tail may still grow into
  std::string text_;
  size_t released_ = 0;
  size_t taken_ = 0;
  bool stopped_ = false;
};

}  // namespace mlaspec::spec
