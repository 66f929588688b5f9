// The compiled-kernel cache: LRU order, errors not cached, keys that tell configs and
// targets apart, and a second NVPTX compile of the same candidate served from the cache.
#include "compiler/codegen/kernel_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

KernelKey Key(std::string name) { return KernelKey{std::move(name), "loop {}", "host"}; }

TEST(KernelCacheTest, FindsWhatWasInsertedAndCountsHitsAndMisses) {
  KernelCache<int> cache(4);
  EXPECT_EQ(cache.Find(Key("a")), nullptr);
  cache.Insert(Key("a"), std::make_shared<const int>(1));
  ASSERT_NE(cache.Find(Key("a")), nullptr);
  EXPECT_EQ(*cache.Find(Key("a")), 1);
  EXPECT_EQ(cache.Find(KernelKey{"a", "loop {}", "cuda:sm_90"}), nullptr);
  KernelCacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 2);
  EXPECT_EQ(stats.misses, 2);
  EXPECT_EQ(stats.size, 1u);
}

TEST(KernelCacheTest, EvictsTheLeastRecentlyUsed) {
  KernelCache<int> cache(2);
  cache.Insert(Key("a"), std::make_shared<const int>(1));
  cache.Insert(Key("b"), std::make_shared<const int>(2));
  ASSERT_NE(cache.Find(Key("a")), nullptr);  // b is now the least recently used
  cache.Insert(Key("c"), std::make_shared<const int>(3));
  EXPECT_NE(cache.Find(Key("a")), nullptr);
  EXPECT_EQ(cache.Find(Key("b")), nullptr);
  EXPECT_NE(cache.Find(Key("c")), nullptr);
  EXPECT_EQ(cache.stats().evictions, 1);
  EXPECT_EQ(cache.stats().size, 2u);
}

TEST(KernelCacheTest, GetOrCompileCompilesOnceAndDoesNotCacheErrors) {
  KernelCache<std::string> cache(8);
  int compiles = 0;
  auto compile = [&]() -> Expected<std::string> {
    ++compiles;
    return std::string("kernel");
  };
  auto first = cache.GetOrCompile(Key("a"), compile);
  auto second = cache.GetOrCompile(Key("a"), compile);
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(compiles, 1);

  auto failing = [&]() -> Expected<std::string> {
    ++compiles;
    return InvalidArgument("bad config");
  };
  EXPECT_FALSE(cache.GetOrCompile(Key("b"), failing).has_value());
  EXPECT_FALSE(cache.GetOrCompile(Key("b"), failing).has_value());
  EXPECT_EQ(compiles, 3);
  // A unique_ptr result is taken over as is.
  auto owned = cache.GetOrCompile(Key("c"), [] {
    return Expected<std::unique_ptr<std::string>>(std::make_unique<std::string>("owned"));
  });
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ(**owned, "owned");
}

TEST(KernelCacheTest, ConcurrentUseIsSafe) {
  KernelCache<int> cache(16);
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        KernelKey key = Key(std::to_string((i * 7 + t) % 32));
        if (cache.Find(key) != nullptr) ++found;
        cache.Insert(key, std::make_shared<const int>(i));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  KernelCacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits + stats.misses, 4000);
  EXPECT_EQ(stats.hits, found.load());
  EXPECT_LE(stats.size, 16u);
}

TEST(KernelCacheTest, KeysTellConfigsAndTargetsApart) {
  auto module = hlo::ParseHloModule(testing::ReadSourceFile("configs/examples/gelu.hlo"), "gelu");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  emitters::Target sm90 = emitters::Target::Parse("cuda:sm_90").value();
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(sm90);
  auto by_default = emitters::EmitKernel(analysis, nullptr, device);
  auto explicit_default = emitters::EmitKernel(
      analysis, {{"threads_per_block", 128}, {"vector", 4}, {"chunks", 1}}, device);
  auto other = emitters::EmitKernel(analysis, {{"vector", 2}}, device);
  ASSERT_TRUE(by_default && explicit_default && other);
  KernelKey a = KernelKey::For(fusion, *by_default, sm90).value();
  EXPECT_EQ(a.fingerprint.size(), 64u);
  EXPECT_EQ(a, KernelKey::For(fusion, *explicit_default, sm90).value());
  EXPECT_NE(a, KernelKey::For(fusion, *other, sm90).value());
  EXPECT_NE(a, KernelKey::For(fusion, *by_default, emitters::Target::Host()).value());
}

TEST(KernelCacheTest, SecondNvptxCompileIsACacheHit) {
  TS_SKIP_WITHOUT_CUBINS();
  auto module = hlo::ParseHloModule(testing::ReadSourceFile("configs/examples/gelu.hlo"), "gelu");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  emitters::Target sm90 = emitters::Target::Parse("cuda:sm_90").value();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  auto kernel = emitters::EmitKernel(analysis, {{"vector", 2}, {"threads_per_block", 64}},
                                     emitters::DeviceInfo::ForTarget(sm90));
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  NvptxKernelCache().Clear();
  bool cached = true;
  auto ptx = CompileForNvptxCached(fusion, *kernel, sm90, NvptxStage::kPtx, &cached);
  ASSERT_TRUE(ptx.has_value()) << ptx.error().message;
  EXPECT_FALSE(cached);
  EXPECT_TRUE((*ptx)->cubin.bytes.empty());
  // A PTX-only entry does not serve a cubin request; the cubin entry then serves both.
  auto cubin = CompileForNvptxCached(fusion, *kernel, sm90, NvptxStage::kCubin, &cached);
  ASSERT_TRUE(cubin.has_value()) << cubin.error().message;
  EXPECT_FALSE(cached);
  EXPECT_FALSE((*cubin)->cubin.bytes.empty());
  auto again = CompileForNvptxCached(fusion, *kernel, sm90, NvptxStage::kCubin, &cached);
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(cached);
  EXPECT_EQ(again->get(), cubin->get());
  auto ptx_again = CompileForNvptxCached(fusion, *kernel, sm90, NvptxStage::kPtx, &cached);
  ASSERT_TRUE(ptx_again.has_value());
  EXPECT_TRUE(cached);
  EXPECT_EQ(ptx_again->get(), cubin->get());
}

}  // namespace
}  // namespace tilesmith::codegen
