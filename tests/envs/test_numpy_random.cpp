// Tests of NumpyRandomState against values drawn by numpy 1.24's np.random.RandomState (legacy seeding).
// The constants come from scripts/pusht_reference/make_numpy_random_reference.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "lerobot/envs/numpy_random.h"

namespace lerobot {
namespace {

// gym_pusht's reset: randint(50, 450) twice, randint(100, 400) twice, then randn().
struct ResetDraws {
  uint32_t seed;
  int64_t agent_x, agent_y, block_x, block_y;
  double angle_noise;
};
const ResetDraws kResets[] = {
    {0u, 222, 97, 217, 292, 0.9787379841057392},
    {1u, 87, 285, 172, 355, -0.5497461766598448},
    {2u, 218, 65, 172, 122, -0.022564745446070376},
    {3u, 412, 202, 349, 231, 0.09649746807200862},
    {7u, 225, 246, 125, 167, -0.037100224950122586},
    {42u, 152, 398, 370, 206, 0.473860833744823},
    {100u, 58, 330, 179, 153, 0.9813207869512316},
    {1000u, 137, 121, 292, 351, -1.03533777841246},
    {12345u, 335, 179, 134, 129, -0.0493228261973559},
    {65535u, 220, 231, 229, 251, 0.11188773839699051},
    {65536u, 146, 433, 206, 365, -0.27667328036046196},
    {100000u, 235, 124, 335, 128, 0.35597632662673595},
    {123456789u, 234, 206, 385, 363, 0.858963679564603},
    {2147483647u, 412, 126, 340, 396, 1.3931666912751481},
    {2147483648u, 332, 54, 373, 135, 0.2255674496017024},
    {2147483649u, 222, 67, 195, 362, -1.3551701398826037},
    {3141592653u, 303, 325, 116, 262, 3.1709116777430664},
    {4000000000u, 284, 292, 105, 359, -0.8326235479353927},
    {4294967294u, 186, 67, 155, 285, 1.160910462243972},
    {4294967295u, 340, 62, 171, 164, 0.0813036681172692},
};

struct RawChecksum {
  uint32_t seed;
  uint64_t fnv1a64;
  uint32_t last;
};
const RawChecksum kRaw[] = {
    {0u, 0x16b60c56435fdfb9ull, 3043451800u},
    {42u, 0x241be5aa1bdde908ull, 1946654618u},
    {4294967295u, 0xb26af39bfc28b3a2ull, 2673539693u},
};

// One call on a RandomState(2024): 'i' randint(lo, hi) -> ivalue, 'n' randn() and 'r' random_sample()
// -> real.
struct Call {
  char op;
  int64_t lo, hi, ivalue;
  double real;
};
const Call kMixed[] = {
    {'i', 50ll, 450ll, 186ll, 0.0},
    {'n', 0, 0, 0, 0.8097735872679961},
    {'r', 0, 0, 0, 0.5951150733516257},
    {'i', 100ll, 400ll, 283ll, 0.0},
    {'i', 0ll, 1ll, 0ll, 0.0},
    {'n', 0, 0, 0, 0.8722027376270465},
    {'i', 0ll, 2ll, 1ll, 0.0},
    {'r', 0, 0, 0, 0.9873016112004435},
    {'i', -5ll, 5ll, -2ll, 0.0},
    {'n', 0, 0, 0, 0.6157148122017662},
    {'i', 0ll, 4294967295ll, 3152561660ll, 0.0},
    {'i', 0ll, 4294967296ll, 1925415921ll, 0.0},
    {'n', 0, 0, 0, 1.0738685189833597},
    {'r', 0, 0, 0, 0.0336332620613794},
    {'i', 0ll, 4294967297ll, 2587496799ll, 0.0},
    {'i', 0ll, 1099511627776ll, 480872173067ll, 0.0},
    {'n', 0, 0, 0, -0.03864287168053801},
    {'i', -4611686018427387904ll, 4611686018427387904ll, 2346384619672961174ll, 0.0},
    {'r', 0, 0, 0, 0.37676543068544677},
    {'i', INT64_MIN, 9223372036854775807ll, 5891238792433380933ll, 0.0},
    {'n', 0, 0, 0, 1.5263948672044976},
    {'i', INT64_MIN, -9223372036854775801ll, -9223372036854775803ll, 0.0},
    {'i', 7ll, 8ll, 7ll, 0.0},
    {'n', 0, 0, 0, -0.8495397885394017},
    {'r', 0, 0, 0, 0.7682539346627851},
    {'i', -1000ll, 3ll, -690ll, 0.0},
    {'i', 50ll, 450ll, 432ll, 0.0},
    {'n', 0, 0, 0, -0.9680890689730812},
    {'i', 100ll, 400ll, 236ll, 0.0},
    {'r', 0, 0, 0, 0.6736554531876068},
    {'i', 0ll, 1ll, 0ll, 0.0},
    {'n', 0, 0, 0, 1.7874410608109943},
    {'i', 0ll, 2ll, 0ll, 0.0},
    {'i', -5ll, 5ll, 0ll, 0.0},
    {'n', 0, 0, 0, -0.7367748348098121},
    {'r', 0, 0, 0, 0.6714402618834503},
    {'i', 0ll, 4294967295ll, 2982389856ll, 0.0},
    {'i', 0ll, 4294967296ll, 3794769847ll, 0.0},
    {'n', 0, 0, 0, -0.6897504737915472},
    {'i', 0ll, 4294967297ll, 3259681126ll, 0.0},
    {'r', 0, 0, 0, 0.46944311572451425},
    {'i', 0ll, 1099511627776ll, 207128099695ll, 0.0},
    {'n', 0, 0, 0, -1.6112407637548238},
    {'i', -4611686018427387904ll, 4611686018427387904ll, -3871855540287337153ll, 0.0},
    {'i', INT64_MIN, 9223372036854775807ll, 4506415919307301768ll, 0.0},
    {'n', 0, 0, 0, -0.9497749607630341},
    {'r', 0, 0, 0, 0.6090625665522097},
    {'i', INT64_MIN, -9223372036854775801ll, -9223372036854775804ll, 0.0},
    {'i', 7ll, 8ll, 7ll, 0.0},
    {'n', 0, 0, 0, -0.38419902685144286},
    {'i', -1000ll, 3ll, -955ll, 0.0},
    {'r', 0, 0, 0, 0.9196542166351916},
    {'i', 50ll, 450ll, 58ll, 0.0},
    {'n', 0, 0, 0, -0.2844741019499267},
    {'i', 100ll, 400ll, 164ll, 0.0},
    {'i', 0ll, 1ll, 0ll, 0.0},
    {'n', 0, 0, 0, 0.4608174546476527},
    {'r', 0, 0, 0, 0.7210522593296165},
    {'i', 0ll, 2ll, 1ll, 0.0},
    {'i', -5ll, 5ll, -3ll, 0.0},
    {'n', 0, 0, 0, 0.10734562528570452},
    {'i', 0ll, 4294967295ll, 316173690ll, 0.0},
    {'r', 0, 0, 0, 0.2459484435262107},
    {'i', 0ll, 4294967296ll, 274956813ll, 0.0},
    {'n', 0, 0, 0, 0.6499098574595055},
    {'i', 0ll, 4294967297ll, 3874510198ll, 0.0},
    {'i', 0ll, 1099511627776ll, 377416127124ll, 0.0},
    {'n', 0, 0, 0, 0.13252367304377358},
    {'r', 0, 0, 0, 0.7711992811173496},
    {'i', -4611686018427387904ll, 4611686018427387904ll, 3898103793683318907ll, 0.0},
    {'i', INT64_MIN, 9223372036854775807ll, 3467894136166403898ll, 0.0},
    {'n', 0, 0, 0, -0.10720247727754884},
    {'i', INT64_MIN, -9223372036854775801ll, -9223372036854775805ll, 0.0},
    {'r', 0, 0, 0, 0.8802311026324962},
    {'i', 7ll, 8ll, 7ll, 0.0},
    {'n', 0, 0, 0, -0.37596827385826004},
    {'i', -1000ll, 3ll, -398ll, 0.0},
};

TEST(NumpyRandomTest, PushTResetDrawsMatchNumpy) {
  for (const ResetDraws& r : kResets) {
    NumpyRandomState rs(r.seed);
    SCOPED_TRACE(testing::Message() << "seed " << r.seed);
    EXPECT_EQ(rs.randint(50, 450), r.agent_x);
    EXPECT_EQ(rs.randint(50, 450), r.agent_y);
    EXPECT_EQ(rs.randint(100, 400), r.block_x);
    EXPECT_EQ(rs.randint(100, 400), r.block_y);
    EXPECT_EQ(rs.randn(), r.angle_noise);  // exact: same operations in the same order
  }
}

TEST(NumpyRandomTest, RawDrawsMatchNumpyOverTwoStateRefills) {
  for (const RawChecksum& r : kRaw) {
    NumpyRandomState rs(r.seed);
    uint64_t h = 0xcbf29ce484222325ull;
    uint32_t v = 0;
    for (int i = 0; i < 1000; ++i) {
      v = rs.next_uint32();
      for (int k = 0; k < 4; ++k) h = (h ^ ((v >> (8 * k)) & 0xFFu)) * 0x100000001b3ull;
    }
    EXPECT_EQ(h, r.fnv1a64) << "seed " << r.seed;
    EXPECT_EQ(v, r.last) << "seed " << r.seed;
  }
}

TEST(NumpyRandomTest, MixedCallsMatchNumpyIncludingWideRangesAndTheCachedGaussian) {
  NumpyRandomState rs(2024);
  int i = 0;
  for (const Call& c : kMixed) {
    SCOPED_TRACE(testing::Message() << "call " << i++ << " op " << c.op);
    if (c.op == 'i') {
      EXPECT_EQ(rs.randint(c.lo, c.hi), c.ivalue) << "randint(" << c.lo << ", " << c.hi << ")";
    } else if (c.op == 'n') {
      EXPECT_EQ(rs.randn(), c.real);
    } else {
      EXPECT_EQ(rs.random_sample(), c.real);
    }
  }
}

TEST(NumpyRandomTest, EmptyRangeThrowsAndSameSeedRepeats) {
  NumpyRandomState rs(5);
  EXPECT_THROW(rs.randint(3, 3), std::invalid_argument);
  EXPECT_THROW(rs.randint(4, 3), std::invalid_argument);
  NumpyRandomState a(123), b(123);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(a.next_uint32(), b.next_uint32());
  const double u = a.random_sample();
  EXPECT_GE(u, 0.0);
  EXPECT_LT(u, 1.0);
}

}  // namespace
}  // namespace lerobot
