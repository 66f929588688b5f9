// The host's inline f32 math against libm over every exponent range: a few units in the
// last place at most, and the special values exactly.
#include "compiler/codegen/vector_math.h"

#include <gtest/gtest.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/codegen/llvm_setup.h"

namespace tilesmith::codegen {
namespace {

// JIT-compiles `float name(float…)` (`Arity` arguments) whose body is `emit(arguments…)`.
template <int Arity>
class Compiled {
 public:
  template <typename Emit>
  Compiled(const char* name, Emit emit) {
    InitializeLlvm();
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>(name, *context);
    llvm::Type* f32 = llvm::Type::getFloatTy(*context);
    auto* type = llvm::FunctionType::get(f32, std::vector<llvm::Type*>(Arity, f32), false);
    auto* function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, *module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(*context, "entry", function));
    if constexpr (Arity == 1) {
      b.CreateRet(emit(b, function->getArg(0)));
    } else {
      b.CreateRet(emit(b, function->getArg(0), function->getArg(1)));
    }
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
    address_ = symbol->getValue();
  }
  template <typename... Args>
  float operator()(Args... x) const {
    static_assert(sizeof...(Args) == Arity);
    return reinterpret_cast<float (*)(Args...)>(address_)(x...);
  }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  uint64_t address_ = 0;
};

using CompiledFunction = Compiled<1>;
using CompiledBinaryFunction = Compiled<2>;

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

TEST(VectorMathTest, LogIsWithinTwoUlpOfLibm) {
  CompiledFunction log("vlog", &EmitVectorLogF32);
  ExpectClose(
      log, [](float x) { return std::log(x); }, 0.0f, 3.4e38f, 2, "log");
  EXPECT_EQ(log(1.0f), 0.0f);
  EXPECT_EQ(log(0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(log(-0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(log(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(log(-1.0f)));
  EXPECT_TRUE(std::isnan(log(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_NEAR(log(1e-45f), std::log(1e-45f), 1e-4);  // the smallest subnormal
}

TEST(VectorMathTest, Log1pIsWithinThreeUlpOfLibm) {
  CompiledFunction log1p("vlog1p", &EmitVectorLog1pF32);
  ExpectClose(
      log1p, [](float x) { return std::log1p(x); }, -0.99999994f, 3.4e38f, 3, "log1p");
  EXPECT_EQ(log1p(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(log1p(-0.0f)));
  EXPECT_EQ(log1p(1e-30f), 1e-30f);
  EXPECT_EQ(log1p(-1.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(log1p(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(log1p(-2.0f)));
  EXPECT_TRUE(std::isnan(log1p(std::numeric_limits<float>::quiet_NaN())));
}

TEST(VectorMathTest, Expm1IsWithinThreeUlpOfLibm) {
  CompiledFunction expm1("vexpm1", &EmitVectorExpm1F32);
  ExpectClose(
      expm1, [](float x) { return std::expm1(x); }, -110.0f, 88.7f, 3, "expm1");
  EXPECT_EQ(expm1(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(expm1(-0.0f)));
  EXPECT_EQ(expm1(1e-30f), 1e-30f);
  EXPECT_EQ(expm1(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(expm1(-std::numeric_limits<float>::infinity()), -1.0f);
  EXPECT_TRUE(std::isnan(expm1(std::numeric_limits<float>::quiet_NaN())));
}

TEST(VectorMathTest, ErfIsWithinSixUlpOfLibmAsXlas) {
  CompiledFunction erf("verf", &EmitVectorErfF32);
  ExpectClose(
      erf, [](float x) { return std::erf(x); }, -10.0f, 10.0f, 6, "erf");
  EXPECT_EQ(erf(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(erf(-0.0f)));
  EXPECT_EQ(erf(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(erf(-std::numeric_limits<float>::infinity()), -1.0f);
  EXPECT_TRUE(std::isnan(erf(std::numeric_limits<float>::quiet_NaN())));
}

// Every pair of a grid of values (every sign, every binade, integers odd and even, the
// special values) against `reference`: within `max_ulps`, and NaN, infinities, zeros and
// their signs exactly.
void ExpectBinaryClose(const CompiledBinaryFunction& fn, float (*reference)(float, float),
                       int64_t max_ulps, const char* what) {
  std::vector<float> values = {0.0f,
                               1.0f,
                               2.0f,
                               3.0f,
                               0.5f,
                               0.75f,
                               1.5f,
                               7.0f,
                               10.0f,
                               0.3f,
                               1e-3f,
                               1e-20f,
                               1e-40f,
                               1e20f,
                               3.4e38f,
                               std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  for (uint32_t bits = 0x00800000u; bits < 0x7F800000u; bits += 0x00A3D70Bu) {
    values.push_back(std::bit_cast<float>(bits));
  }
  int64_t count = static_cast<int64_t>(values.size());
  for (int64_t i = 0; i < count; ++i) values.push_back(-values[i]);
  int64_t worst = 0;
  std::string worst_at;
  for (float x : values) {
    for (float y : values) {
      float expected = reference(x, y);
      float actual = fn(x, y);
      std::string at = std::string(what) + "(" + std::to_string(x) + ", " + std::to_string(y) + ")";
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(actual)) << at << " = " << actual;
        continue;
      }
      if (std::isinf(expected) || expected == 0 || std::isinf(actual) || actual == 0) {
        EXPECT_EQ(actual, expected) << at;
        EXPECT_EQ(std::signbit(actual), std::signbit(expected)) << at;
        continue;
      }
      int64_t ulps = UlpDistance(actual, expected);
      if (ulps > worst) {
        worst = ulps;
        worst_at = at;
      }
    }
  }
  EXPECT_LE(worst, max_ulps) << what << " is " << worst << " ulp off at " << worst_at;
}

TEST(VectorMathTest, Atan2IsWithinThreeUlpOfLibm) {
  CompiledBinaryFunction atan2("vatan2", &EmitVectorAtan2F32);
  ExpectBinaryClose(
      atan2, [](float y, float x) { return std::atan2(y, x); }, 3, "atan2");
}

TEST(VectorMathTest, PowIsWithinOneUlpOfLibm) {
  CompiledBinaryFunction pow("vpow", &EmitVectorPowF32);
  ExpectBinaryClose(
      pow, [](float x, float y) { return std::pow(x, y); }, 1, "pow");
  EXPECT_EQ(pow(std::numeric_limits<float>::quiet_NaN(), 0.0f), 1.0f);
  EXPECT_EQ(pow(1.0f, std::numeric_limits<float>::quiet_NaN()), 1.0f);
  EXPECT_EQ(pow(-1.0f, std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(pow(-2.0f, 3.0f), -8.0f);
  EXPECT_EQ(pow(-0.0f, -3.0f), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(pow(-2.0f, 0.5f)));
  EXPECT_EQ(pow(-std::numeric_limits<float>::infinity(), 0.5f),
            std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace tilesmith::codegen
