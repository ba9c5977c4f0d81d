#include "checkpoint/checksum.hpp"

#include <cstring>

namespace flexmpi::checkpoint {

namespace {

// Bytes [first, first + count) of one word, placed at their lanes.
std::uint64_t partial_word(const unsigned char* bytes, unsigned first, unsigned count) noexcept {
  std::uint64_t word = 0;
  for (unsigned k = 0; k < count; ++k) {
    word |= static_cast<std::uint64_t>(bytes[k]) << (8U * (first + k));
  }
  return word;
}

}  // namespace

std::uint64_t checksum_part(const void* data, std::size_t bytes, std::uint64_t offset) noexcept {
  const auto* in = static_cast<const unsigned char*>(data);
  std::uint64_t sum = 0;
  std::uint64_t word_index = offset / 8;
  // A range that starts inside a word: its bytes at their lanes.
  if (const unsigned lane = static_cast<unsigned>(offset % 8); lane != 0 && bytes > 0) {
    const unsigned count = static_cast<unsigned>(bytes < 8 - lane ? bytes : 8 - lane);
    sum += (2 * word_index + 1) * partial_word(in, lane, count);
    in += count;
    bytes -= count;
    ++word_index;
  }
  // Whole words, four sums at a time (independent multiply-adds).
  const std::size_t words = bytes / 8;
  std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::uint64_t weight = 2 * word_index + 1;
  std::size_t w = 0;
  for (; w + 4 <= words; w += 4, weight += 8) {
    std::uint64_t v[4];
    std::memcpy(v, in + 8 * w, sizeof v);
    s0 += weight * v[0];
    s1 += (weight + 2) * v[1];
    s2 += (weight + 4) * v[2];
    s3 += (weight + 6) * v[3];
  }
  for (; w < words; ++w, weight += 2) {
    std::uint64_t v = 0;
    std::memcpy(&v, in + 8 * w, sizeof v);
    s0 += weight * v;
  }
  sum += s0 + s1 + s2 + s3;
  // The start of a last, incomplete word.
  if (const std::size_t tail = bytes % 8; tail != 0) {
    sum += weight * partial_word(in + 8 * words, 0, static_cast<unsigned>(tail));
  }
  return sum;
}

}  // namespace flexmpi::checkpoint
