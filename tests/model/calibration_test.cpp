// Calibration arithmetic (model/calibration.hpp): median of per-round minima,
// the relative least-squares Hockney fit, message-size bands, per-collective fits.
#include "model/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

TEST(Calibration, MedianOfMinima) {
  // Round minima 1, 2, 9: the median 2 ignores the disturbed round; spread (9-1)/2.
  const RobustTime t = median_of_minima({{5, 1, 3}, {2, 4}, {9, 10}});
  EXPECT_DOUBLE_EQ(t.seconds, 2.0);
  EXPECT_DOUBLE_EQ(t.spread, 4.0);
  EXPECT_DOUBLE_EQ(median_of_minima({{3}}).spread, 0.0);
  EXPECT_THROW(median_of_minima({}), Error);
  EXPECT_THROW(median_of_minima({{1}, {}}), Error);
  EXPECT_THROW(median_of_minima({{-1}}), Error);
}

TEST(Calibration, HockneyFitIsExactOnALine) {
  const std::vector<double> n = {8, 1024, 65536};
  std::vector<double> t;
  for (double x : n) t.push_back(1e-6 + x * 2e-10);
  const LinkBand band = fit_hockney(n, t);
  EXPECT_NEAR(band.alpha, 1e-6, 1e-12);
  EXPECT_NEAR(band.beta, 2e-10, 1e-15);
  EXPECT_LT(max_relative_error(band, n, t), 1e-9);
  // Never negative: a falling curve gets latency only.
  const std::vector<double> falling = {2e-6, 1e-6, 0.5e-6};
  const LinkBand flat = fit_hockney(n, falling);
  EXPECT_GE(flat.alpha, 0.0);
  EXPECT_GE(flat.beta, 0.0);
  EXPECT_THROW(fit_hockney(std::vector<double>{8}, std::vector<double>{0.0}), Error);
  EXPECT_THROW(fit_hockney(std::vector<double>{8, 16}, std::vector<double>{1.0}), Error);
}

// Two regimes (cache: 0.1 ns/B up to 256 KiB; memory: 0.4 ns/B beyond), one
// cache edge given: two bands, each exact; a third regime found by splitting.
TEST(Calibration, LinkBandsAtEdgesAndWhereTheFitBreaks) {
  std::vector<double> n, t;
  for (double x = 8; x <= 8 << 20; x *= 2) {
    n.push_back(x);
    t.push_back(x <= 2048 ? 5e-7 : x <= (256 << 10) ? 2e-6 + x * 1e-10 : x * 4e-10);
  }
  const std::vector<double> edges = {256 << 10};
  const std::vector<LinkBand> bands = fit_link_bands(n, t, edges, 0.03);
  ASSERT_EQ(bands.size(), 3u);  // eager (split), cache (edge), memory
  EXPECT_NEAR(bands[0].alpha, 5e-7, 1e-12);
  EXPECT_NEAR(bands[0].up_to, std::sqrt(2048.0 * 4096.0), 1e-6);
  EXPECT_NEAR(bands[1].beta, 1e-10, 1e-15);
  EXPECT_NEAR(bands[1].up_to, std::sqrt(262144.0 * 524288.0), 1e-3);
  EXPECT_NEAR(bands[2].beta, 4e-10, 1e-15);
  const PiecewiseLink link(bands, 0.0);
  for (std::size_t i = 0; i < n.size(); ++i) {
    EXPECT_NEAR(link.at(n[i]).alpha + n[i] * link.at(n[i]).beta, t[i], 1e-9 * t[i]) << n[i];
  }
  EXPECT_THROW(fit_link_bands(std::vector<double>{8}, std::vector<double>{1e-6}, edges, 0.03),
               Error);
  EXPECT_THROW(fit_link_bands(std::vector<double>{16, 8}, std::vector<double>{1, 1}, edges, 0.03),
               Error);
}

TEST(Calibration, CollectiveFitIsMeasuredOverModelled) {
  const Hockney h{1e-6, 1e-9, 0};
  const std::vector<double> n = {8, 4096};
  std::vector<double> t;
  for (double x : n) t.push_back(2 * call_seconds(MpiLibrary::mpich, Routine::bcast, x, 2, h));
  const CollectiveFit fit = fit_collective(MpiLibrary::mpich, Routine::bcast, 2, n, t, h);
  EXPECT_EQ(fit.processes, 2);
  ASSERT_EQ(fit.points.size(), 2u);
  EXPECT_DOUBLE_EQ(fit.points[0].scale, 2.0);
  EXPECT_DOUBLE_EQ(fit.points[1].scale, 2.0);
}

}  // namespace
}  // namespace flexmpi
