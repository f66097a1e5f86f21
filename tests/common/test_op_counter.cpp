// OpCounter: top-level operators and host synchronisations, counted the same on any machine.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lerobot/common/error.h"
#include "lerobot/common/op_counter.h"

namespace lerobot {
namespace {

TEST(OpCounter, CountsTopLevelOperatorsAndReadsBack) {
  auto x = torch::randn({4, 4});
  auto y = torch::randn({4, 4});
  OpCounter c;
  auto z = x.add(y);  // 1
  z.mul_(2.0);        // 2
  EXPECT_EQ(c.ops(), 2);
  EXPECT_EQ(c.syncs(), 0);
  EXPECT_EQ(c.by_name().at("aten::add"), 1);
  const double s = z.sum().item<double>();  // sum + item (item's _local_scalar_dense is inside it)
  EXPECT_EQ(c.ops(), 4);
  EXPECT_EQ(c.syncs(), 1) << "item() reads a value back: a host synchronisation on a GPU";
  EXPECT_EQ(c.sync_sites_text(), "aten::item x1") << "named by the top-level operator it happened in";
  (void)s;
  auto m = torch::nn::Linear(4, 3);
  c.reset();
  m->forward(x).sum().backward();
  EXPECT_GE(c.ops(), 4) << "forward (linear, sum) and backward operators are counted";
  EXPECT_EQ(c.syncs(), 0);
  EXPECT_TRUE(c.sync_sites().empty()) << c.sync_sites_text();
  (void)torch::nonzero(x > 0);  // a data-dependent shape, inside no other operator
  EXPECT_EQ(c.sync_sites().at("aten::nonzero"), 1);
  (void)x.sum().item<double>();
  EXPECT_EQ(c.sync_sites_text(), "aten::item x1, aten::nonzero x1");
}

TEST(OpCounter, OnlyOneAtATimeAndNothingCountedAfterwards) {
  int64_t after = 0;
  {
    OpCounter c;
    EXPECT_THROW(OpCounter second, Error);
    torch::ones({2}).neg();
    after = c.ops();
  }
  OpCounter again;  // the first one is gone: a new one may start
  EXPECT_EQ(after, 2);
  EXPECT_EQ(again.ops(), 0);
}

}  // namespace
}  // namespace lerobot
