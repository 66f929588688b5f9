// The host's inline f32 exp and tanh against libm over every exponent range: a few units
// in the last place at most, and the special values exactly.
#include "compiler/codegen/vector_math.h"

#include <gtest/gtest.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>

#include <bit>
#include <cmath>
#include <limits>

#include "compiler/codegen/llvm_setup.h"

namespace tilesmith::codegen {
namespace {

using UnaryFn = float (*)(float);

// JIT-compiles `float name(float)` whose body is `emit(x)`.
class CompiledFunction {
 public:
  CompiledFunction(const char* name, llvm::Value* (*emit)(llvm::IRBuilderBase&, llvm::Value*)) {
    InitializeLlvm();
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>(name, *context);
    auto* type = llvm::FunctionType::get(llvm::Type::getFloatTy(*context),
                                         {llvm::Type::getFloatTy(*context)}, false);
    auto* function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, *module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(*context, "entry", function));
    b.CreateRet(emit(b, function->getArg(0)));
    // The host's own CPU, as kernels get it: with FMA the multiply-adds fuse.
    auto machine = llvm::orc::JITTargetMachineBuilder::detectHost();
    EXPECT_TRUE(static_cast<bool>(machine));
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*machine)).create();
    EXPECT_TRUE(static_cast<bool>(jit));
    jit_ = std::move(*jit);
    EXPECT_FALSE(
        jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))));
    auto symbol = jit_->lookup(name);
    EXPECT_TRUE(static_cast<bool>(symbol));
    fn_ = symbol->toPtr<float(float)>();
  }
  float operator()(float x) const { return fn_(x); }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  UnaryFn fn_ = nullptr;
};

int64_t UlpDistance(float a, float b) {
  auto key = [](float v) {
    int32_t bits = std::bit_cast<int32_t>(v);
    return bits < 0 ? int64_t{INT32_MIN} - bits : int64_t{bits};
  };
  return std::abs(key(a) - key(b));
}

void ExpectClose(const CompiledFunction& fn, float (*reference)(float), float low, float high,
                 int64_t max_ulps, const char* what) {
  int64_t worst = 0;
  float worst_at = 0;
  // Every 2^k-th f32 bit pattern across the range: thousands of points per binade.
  for (uint32_t bits = 0; bits < 0x7F800000u; bits += 997) {
    for (float sign : {1.0f, -1.0f}) {
      float x = sign * std::bit_cast<float>(bits);
      if (x < low || x > high) continue;
      float expected = reference(x);
      float actual = fn(x);
      if (std::isinf(expected) || expected == 0) {
        EXPECT_EQ(actual, expected) << what << "(" << x << ")";
        continue;
      }
      int64_t ulps = UlpDistance(actual, expected);
      if (ulps > worst) {
        worst = ulps;
        worst_at = x;
      }
    }
  }
  EXPECT_LE(worst, max_ulps) << what << " is " << worst << " ulp off at " << worst_at;
}

TEST(VectorMathTest, ExpIsWithinTwoUlpOfLibm) {
  CompiledFunction exp("vexp", &EmitVectorExpF32);
  ExpectClose(
      exp, [](float x) { return std::exp(x); }, -103.0f, 88.7f, 2, "exp");
  EXPECT_EQ(exp(0.0f), 1.0f);
  EXPECT_EQ(exp(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(exp(-200.0f), 0.0f);
  EXPECT_EQ(exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(exp(std::numeric_limits<float>::quiet_NaN())));
}

TEST(VectorMathTest, TanhIsWithinFiveUlpOfLibmAsXlas) {
  CompiledFunction tanh("vtanh", &EmitVectorTanhF32);
  ExpectClose(
      tanh, [](float x) { return std::tanh(x); }, -20.0f, 20.0f, 5, "tanh");
  EXPECT_EQ(tanh(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(tanh(-0.0f)));
  EXPECT_EQ(tanh(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(tanh(-std::numeric_limits<float>::infinity()), -1.0f);
  EXPECT_TRUE(std::isnan(tanh(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace tilesmith::codegen
