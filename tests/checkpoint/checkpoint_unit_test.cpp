// The checkpoint's checksum (composes across any split of the bytes, sees
// every flipped bit and a moved block), the settings' parsers, element types.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <random>
#include <vector>

#include "base/element_type.hpp"
#include "checkpoint/checkpoint_schedule.hpp"
#include "checkpoint/checksum.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

std::vector<unsigned char> random_bytes(std::size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::vector<unsigned char> bytes(count);
  for (unsigned char& byte : bytes) byte = static_cast<unsigned char>(generator());
  return bytes;
}

TEST(Checksum, AnySplitOfTheBytesSumsToTheWhole) {
  const std::vector<unsigned char> bytes = random_bytes(1013, 7);
  const std::uint64_t whole = checkpoint::checksum_part(bytes.data(), bytes.size(), 0);
  std::mt19937 generator(3);
  for (int trial = 0; trial < 200; ++trial) {
    // Cut at random places (some inside words, some empty pieces).
    std::vector<std::size_t> cuts{0, bytes.size()};
    for (int k = 0; k < 4; ++k) cuts.push_back(generator() % (bytes.size() + 1));
    std::sort(cuts.begin(), cuts.end());
    std::uint64_t sum = 0;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      sum += checkpoint::checksum_part(bytes.data() + cuts[k], cuts[k + 1] - cuts[k], cuts[k]);
    }
    ASSERT_EQ(sum, whole) << "trial " << trial;
  }
}

TEST(Checksum, EveryFlippedBitChangesIt) {
  std::vector<unsigned char> bytes = random_bytes(64, 11);
  const std::uint64_t whole = checkpoint::checksum_part(bytes.data(), bytes.size(), 40);
  for (std::size_t byte = 0; byte < bytes.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      bytes[byte] ^= static_cast<unsigned char>(1U << bit);
      EXPECT_NE(checkpoint::checksum_part(bytes.data(), bytes.size(), 40), whole) << byte;
      bytes[byte] ^= static_cast<unsigned char>(1U << bit);
    }
  }
}

TEST(Checksum, TheSameBytesElsewhereDiffer) {
  const std::vector<unsigned char> bytes = random_bytes(256, 5);
  EXPECT_NE(checkpoint::checksum_part(bytes.data(), bytes.size(), 0),
            checkpoint::checksum_part(bytes.data(), bytes.size(), 8));
  EXPECT_EQ(checkpoint::checksum_part(bytes.data(), 0, 12345), 0U);
}

TEST(CheckpointSettings, PeriodInIterationsOrSeconds) {
  CheckpointSettings settings;
  parse_checkpoint_period("200", settings);
  EXPECT_EQ(settings.every_iterations, 200);
  EXPECT_EQ(settings.every_seconds, 0.0);
  parse_checkpoint_period("60s", settings);
  EXPECT_EQ(settings.every_iterations, 0);
  EXPECT_EQ(settings.every_seconds, 60.0);
  parse_checkpoint_period("0.5s", settings);
  EXPECT_EQ(settings.every_seconds, 0.5);
  for (const char* bad : {"", "s", "0", "-3", "2.5", "60m", "1e12", "10 s", "abc"}) {
    EXPECT_THROW(parse_checkpoint_period(bad, settings), Error) << bad;
  }
}

TEST(CheckpointSettings, Signals) {
  CheckpointSettings settings;
  parse_checkpoint_signals("USR1,TERM", settings);
  EXPECT_TRUE(settings.on_sigterm);
  parse_checkpoint_signals("USR1", settings);
  EXPECT_FALSE(settings.on_sigterm);
  EXPECT_THROW(parse_checkpoint_signals("TERM", settings), Error);
  EXPECT_THROW(parse_checkpoint_signals("USR2", settings), Error);
}

TEST(ElementType, NamedTypesAreNumbersOthersOpaque) {
  EXPECT_EQ(element_type_of(MPI_DOUBLE), ElementType::float64);
  EXPECT_EQ(element_type_of(MPI_FLOAT), ElementType::float32);
  EXPECT_EQ(element_type_of(MPI_INT), ElementType::int32);
  EXPECT_EQ(element_type_of(MPI_UNSIGNED_LONG_LONG), ElementType::uint64);
  EXPECT_EQ(element_type_of(MPI_BYTE), ElementType::uint8);
  EXPECT_EQ(element_type_of(MPI_DOUBLE_INT), ElementType::opaque);
  EXPECT_EQ(element_type_name(ElementType::float64), "float64");
  EXPECT_EQ(element_type_name(ElementType::opaque), "opaque");
}

}  // namespace
}  // namespace flexmpi
