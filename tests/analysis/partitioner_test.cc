// The computation partitioner on the spec's examples and its rules one by one.
#include "compiler/analysis/partitioner.h"

#include <gtest/gtest.h>

#include <set>

#include "compiler/hlo/parser.h"

namespace tilesmith::analysis {
namespace {

std::unique_ptr<hlo::HloModule> Parse(std::string_view text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

// The partition as sets of instruction names, one per subgraph.
std::set<std::set<std::string>> Groups(const PartitionedComputation& partition) {
  std::set<std::set<std::string>> groups;
  for (const Subgraph& subgraph : partition.subgraphs()) {
    std::set<std::string> names;
    for (const hlo::HloInstruction* instruction : subgraph.instructions) {
      names.insert(instruction->name());
    }
    groups.insert(names);
  }
  return groups;
}

TEST(PartitionerTest, LogReadAtTwoIndicesGetsItsOwnFunction) {
  // The spec's example: add reads log at (i, j), transpose reads it at (j, i), so log
  // cannot live in add's function. transpose has a single user and joins add (the spec's
  // rule "single user: fused into the user"); XLA's older partitioner also split
  // transpose off, which the spec's text counts as a third function.
  auto module = Parse(R"(
    f {
      param = f32[20,20] parameter(0)
      log = f32[20,20] log(param)
      transpose = f32[20,20] transpose(log), dimensions={1,0}
      ROOT add = f32[20,20] add(log, transpose)
    })");
  PartitionedComputation partition = PartitionComputation(*module->fusion());
  EXPECT_EQ(Groups(partition), (std::set<std::set<std::string>>{{"add", "transpose"}, {"log"}}));
  const hlo::HloComputation& f = *module->fusion();
  EXPECT_EQ(partition.SubgraphOf(*f.root()), partition.SubgraphOf(*f.root()->operand(1)));
  EXPECT_NE(partition.SubgraphOf(*f.root()), partition.SubgraphOf(*f.root()->operand(0)));
  // Inside add's function, transpose's output is read at add's own index; it is log, its
  // operand, that the transpose reads at (j, i).
  EXPECT_EQ(partition.IndexingInSubgraph(*f.root()->operand(1)).ToString(),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 19]");
}

TEST(PartitionerTest, SliceAndPadReadTheSameValueAtDifferentIndices) {
  // The spec's second example: add of a slice and a pad of the same value.
  auto module = Parse(R"(
    f {
      p = f32[10] parameter(0)
      e = f32[10] exponential(p)
      s = f32[8] slice(e), slice={[1:9]}
      z = f32[] constant(0)
      pad = f32[8] pad(e, z), padding=-1_-1
      ROOT add = f32[8] add(s, pad)
    })");
  PartitionedComputation partition = PartitionComputation(*module->fusion());
  // pad with -1_-1 reads e at i + 1, exactly like the slice: one index, one function.
  EXPECT_EQ(Groups(partition), (std::set<std::set<std::string>>{{"add", "s", "pad", "e", "z"}}));

  auto shifted = Parse(R"(
    f {
      p = f32[10] parameter(0)
      e = f32[10] exponential(p)
      s = f32[8] slice(e), slice={[0:8]}
      z = f32[] constant(0)
      pad = f32[8] pad(e, z), padding=0_-2
      r = f32[8] reverse(pad), dimensions={0}
      ROOT add = f32[8] add(s, r)
    })");
  PartitionedComputation split = PartitionComputation(*shifted->fusion());
  // e is read at i by the slice and at 7 - i through pad and reverse: its own function.
  std::set<std::set<std::string>> groups = Groups(split);
  EXPECT_TRUE(groups.contains(std::set<std::string>{"e"}));
}

TEST(PartitionerTest, ElementwiseChainsStayTogether) {
  auto module = Parse(R"(
    f {
      p = f32[4,8] parameter(0)
      c = f32[] constant(2)
      b = f32[4,8] broadcast(c), dimensions={}
      m = f32[4,8] multiply(p, b)
      e = f32[4,8] exponential(m)
      ROOT a = f32[4,8] add(e, m)
    })");
  PartitionedComputation partition = PartitionComputation(*module->fusion());
  // m has two users reading it at the same index: it stays in their function.
  EXPECT_EQ(Groups(partition), (std::set<std::set<std::string>>{{"a", "e", "m", "b", "c"}}));
}

TEST(PartitionerTest, OutputsWithTheSameDimsShareAFunction) {
  auto module = Parse(R"(
    f {
      p = f64[] parameter(0)
      q = f64[] parameter(1)
      mn = f64[] minimum(p, q)
      mx = f64[] maximum(p, q)
      ROOT t = (f64[], f64[]) tuple(mn, mx)
    })");
  PartitionedComputation partition = PartitionComputation(*module->fusion());
  ASSERT_EQ(partition.subgraphs().size(), 1u);
  EXPECT_EQ(partition.subgraphs()[0].roots.size(), 2u);
}

TEST(PartitionerTest, ForcedRootsAreRespected) {
  auto module = Parse(R"(
    f {
      p = f32[16,32] parameter(0)
      e = f32[16,32] exponential(p)
      t = f32[32,16] transpose(e), dimensions={1,0}
      ROOT a = f32[32,16] abs(t)
    })");
  PartitionedComputation partition = PartitionComputation(
      *module->fusion(),
      [](const hlo::HloInstruction& instruction) { return instruction.name() == "t"; });
  EXPECT_EQ(Groups(partition), (std::set<std::set<std::string>>{{"a"}, {"t", "e"}}));
}

}  // namespace
}  // namespace tilesmith::analysis
