// Runs a libFuzzer target without libFuzzer (any compiler): every file of the corpus folders given
// on the command line, then a fixed number of deterministic mutations of each (byte flips,
// truncations, duplicated and deleted ranges, interesting integers). A regression check for the
// committed seeds and the crashes found earlier, in the normal and sanitizer builds; the real
// coverage-guided search is the clang build's <name>_fuzzer (scripts/fuzz.sh).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

constexpr int kMutationsPerSeed = 200;

std::vector<uint8_t> mutate(const std::vector<uint8_t>& seed, std::mt19937_64& rng) {
  std::vector<uint8_t> out = seed;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t n = out.size();
    switch (rng() % 6) {
      case 0:  // flip a bit
        if (n) out[rng() % n] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // truncate
        if (n) out.resize(rng() % n);
        break;
      case 2: {  // delete a range
        if (n < 2) break;
        const size_t a = rng() % n, len = 1 + rng() % std::min<size_t>(n - a, 64);
        out.erase(out.begin() + static_cast<long>(a), out.begin() + static_cast<long>(a + len));
        break;
      }
      case 3: {  // duplicate a range
        if (!n) break;
        const size_t a = rng() % n, len = 1 + rng() % std::min<size_t>(n - a, 64);
        std::vector<uint8_t> piece(out.begin() + static_cast<long>(a),
                                   out.begin() + static_cast<long>(a + len));
        out.insert(out.begin() + static_cast<long>(rng() % (n + 1)), piece.begin(), piece.end());
        break;
      }
      case 4: {  // overwrite with an interesting value
        static constexpr uint8_t kVals[] = {0x00, 0xff, 0x7f, 0x80, '"', '{', '}', '[', '9', '-'};
        if (n) out[rng() % n] = kVals[rng() % sizeof(kVals)];
        break;
      }
      default: {  // write a large little-endian integer (offsets, lengths)
        if (n < 8) break;
        const uint64_t v = (rng() % 2) ? ~uint64_t{0} >> (rng() % 64) : rng();
        std::memcpy(out.data() + rng() % (n - 7), &v, 8);
        break;
      }
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p = argv[i];
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no corpus files given (usage: %s DIR_OR_FILE...)\n", argv[0]);
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::mt19937_64 rng(0x6d6c6173706563ull);
  size_t runs = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<uint8_t> seed((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(seed.data(), seed.size());
    ++runs;
    for (int m = 0; m < kMutationsPerSeed; ++m, ++runs) {
      const std::vector<uint8_t> x = mutate(seed, rng);
      LLVMFuzzerTestOneInput(x.data(), x.size());
    }
  }
  std::printf("replay: %zu inputs from %zu seeds, no crash\n", runs, files.size());
  return 0;
}
