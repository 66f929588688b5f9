#include "compiler/codegen/host_backend.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "compiler/codegen/kernel_codegen.h"
#include "compiler/codegen/llvm_setup.h"
#include "compiler/codegen/math_library.h"
#include "compiler/codegen/vector_math.h"
#include "compiler/hlo/buffer.h"
#include "compiler/hlo/tiling.h"
#include "support/thread_pool.h"

namespace tilesmith::codegen {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// libm for the host: `expf` for float, `exp` for double; the C runtime's complex
// functions, as std::complex (and so the evaluator) calls them.
class HostHooks : public TargetHooks {
 public:
  HostHooks(bool complex_library, bool vector_math)
      : complex_library_(complex_library), vector_math_(vector_math) {}
  llvm::FunctionCallee MathFunction(llvm::Module& module, std::string_view name,
                                    llvm::Type* type) override {
    return DeclareMathFunction(module, "", name, type);
  }
  llvm::Value* CallComplexFunction(llvm::IRBuilderBase& builder, std::string_view name,
                                   hlo::PrimitiveType type,
                                   std::span<llvm::Value* const> arguments) override {
    if (!complex_library_) return nullptr;
    return CallLibcComplexFunction(builder, name, type, arguments);
  }
  int ReductionAccumulators(hlo::PrimitiveType type) override {
    // One 256-bit register of accumulators.
    return hlo::BitWidth(type) <= 32 ? 8 : 4;
  }
  bool FoldMinMaxAsOrderedKeys() override { return true; }
  llvm::Value* EmitMathInline(llvm::IRBuilderBase& builder, std::string_view name, llvm::Value* x,
                              llvm::Value* y) override {
    return vector_math_ ? EmitVectorMath(builder, name, x, y) : nullptr;
  }

 private:
  bool complex_library_;
  bool vector_math_;
};

// Host kernels get their buffers as separate noalias arguments of an inner function (so
// LLVM knows they do not overlap), and an entry `(ptr* buffers, i64 first, i64 end)` that
// unpacks them and calls it.
class HostAbi : public KernelAbi {
 public:
  explicit HostAbi(const HostOptions& options)
      : hooks_(options.complex_library, options.vector_math) {}
  TargetHooks& hooks() override { return hooks_; }

  llvm::Function* CreateFunction(llvm::Module& module, const emitters::KernelIR& kernel) override {
    llvm::LLVMContext& context = module.getContext();
    llvm::Type* ptr = llvm::PointerType::get(context, 0);
    llvm::Type* i64 = llvm::Type::getInt64Ty(context);
    std::vector<llvm::Type*> arguments(kernel.buffers.size(), ptr);
    arguments.push_back(i64);
    arguments.push_back(i64);
    auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), arguments, false);
    llvm::Function* function = llvm::Function::Create(type, llvm::Function::InternalLinkage,
                                                      kernel.name + ".body", module);
    for (size_t i = 0; i < kernel.buffers.size(); ++i) {
      function->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
      function->addParamAttr(static_cast<unsigned>(i),
                             llvm::Attribute::getWithAlignment(context, llvm::Align(64)));
    }
    function->addFnAttr(llvm::Attribute::AlwaysInline);
    function->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::BasicBlock::Create(context, "entry", function);
    return function;
  }

  llvm::Value* BufferPointer(llvm::IRBuilder<>&, llvm::Function* function, int64_t i) override {
    return function->getArg(static_cast<unsigned>(i));
  }

  bool LoopsOverLaunch() const override { return true; }

  // A stack array of the call: each call runs its own blocks one after another on one
  // worker, so every task of the pool has its own shared memory.
  llvm::Value* SharedBase(llvm::IRBuilder<>& builder, llvm::Function* function,
                          const emitters::KernelIR& kernel, int64_t index) override {
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    llvm::AllocaInst* array = entry.CreateAlloca(
        llvm::ArrayType::get(builder.getInt8Ty(),
                             static_cast<uint64_t>(kernel.shared[index].bytes())),
        nullptr, "shared." + kernel.shared[index].name);
    array->setAlignment(llvm::Align(64));
    return array;
  }

  llvm::Value* LaunchId(llvm::IRBuilder<>&, int64_t, const emitters::LaunchGrid&) override {
    return nullptr;  // the host function loops over the launch itself
  }

  void Finish(llvm::Module& module, llvm::Function* body,
              const emitters::KernelIR& kernel) override {
    llvm::LLVMContext& context = module.getContext();
    llvm::Type* ptr = llvm::PointerType::get(context, 0);
    llvm::Type* i64 = llvm::Type::getInt64Ty(context);
    auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, i64, i64}, false);
    llvm::Function* entry =
        llvm::Function::Create(type, llvm::Function::ExternalLinkage, kernel.name, module);
    entry->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", entry));
    std::vector<llvm::Value*> arguments;
    for (size_t i = 0; i < kernel.buffers.size(); ++i) {
      llvm::Value* slot = b.CreateInBoundsGEP(ptr, entry->getArg(0), b.getInt64(i));
      arguments.push_back(b.CreateLoad(ptr, slot));
    }
    arguments.push_back(entry->getArg(1));
    arguments.push_back(entry->getArg(2));
    b.CreateCall(body, arguments);
    b.CreateRetVoid();
  }

 private:
  HostHooks hooks_;
};

// A 64-byte aligned, zero-filled allocation.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes)
      : size(bytes), data(std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64))) {
    std::memset(data, 0, std::max<size_t>(64, (bytes + 63) / 64 * 64));
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  size_t size;
  void* data;
};

// Leaf `leaf` (depth-first, emitters::ArrayLeaves) of a tuple literal; an array for -1.
const hlo::Literal& ArrayLeaf(const hlo::Literal& value, int64_t leaf) {
  if (leaf < 0 || !value.shape().IsTuple()) return value;
  for (const hlo::Literal& element : value.tuple_elements()) {
    int64_t size = static_cast<int64_t>(emitters::ArrayLeaves(element.shape()).size());
    if (leaf < size) return ArrayLeaf(element, leaf);
    leaf -= size;
  }
  return value;  // out of range: the caller reports the shape mismatch
}

Expected<std::unique_ptr<llvm::Module>> BuildModule(const emitters::KernelIR& kernel,
                                                    llvm::LLVMContext& context,
                                                    llvm::TargetMachine& machine,
                                                    const HostOptions& options = {}) {
  auto module = std::make_unique<llvm::Module>(kernel.name, context);
  module->setDataLayout(machine.createDataLayout());
  module->setTargetTriple(machine.getTargetTriple().str());
  HostAbi abi(options);
  TS_RETURN_IF_ERROR(EmitKernelFunction(kernel, *module, abi));
  std::string problems;
  llvm::raw_string_ostream stream(problems);
  if (llvm::verifyModule(*module, &stream)) {
    return MakeError(ErrorCode::kInternal,
                     "invalid LLVM IR for '" + kernel.name + "': " + problems);
  }
  return module;
}

std::string ModuleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  module.print(stream, nullptr);
  return text;
}

}  // namespace

struct HostKernel::JitState {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

HostKernel::~HostKernel() = default;

Expected<std::unique_ptr<HostKernel>> CompileForHost(emitters::KernelIR kernel,
                                                     const HostOptions& options) {
  InitializeLlvm();
  auto result = std::unique_ptr<HostKernel>(new HostKernel());
  auto start = std::chrono::steady_clock::now();
  auto machine_builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine_builder) return MakeError(ErrorCode::kInternal, "cannot describe the host CPU");
  machine_builder->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  auto machine = machine_builder->createTargetMachine();
  if (!machine) return MakeError(ErrorCode::kInternal, "cannot create a host target machine");
  auto context = std::make_unique<llvm::LLVMContext>();
  TS_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                      BuildModule(kernel, *context, **machine, options));
  result->stats_.emit_ms = MillisecondsSince(start);

  start = std::chrono::steady_clock::now();
  OptimizeModule(*module, **machine);
  result->llvm_ir_ = ModuleText(*module);
  result->stats_.optimize_ms = MillisecondsSince(start);

  start = std::chrono::steady_clock::now();
  auto jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*machine_builder)).create();
  if (!jit) {
    return MakeError(ErrorCode::kInternal,
                     "cannot start the JIT: " + llvm::toString(jit.takeError()));
  }
  // Math functions (expf, tanhf, …) resolve to this process's libm.
  auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!generator) return MakeError(ErrorCode::kInternal, "cannot expose libm to the JIT");
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
  if (auto error =
          (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    return MakeError(ErrorCode::kInternal,
                     "JIT rejected the module: " + llvm::toString(std::move(error)));
  }
  auto symbol = (*jit)->lookup(kernel.name);
  if (!symbol) {
    return MakeError(ErrorCode::kInternal,
                     "JIT compilation failed: " + llvm::toString(symbol.takeError()));
  }
  result->entry_ = symbol->toPtr<HostKernel::EntryPoint>();
  result->stats_.codegen_ms = MillisecondsSince(start);
  result->jit_ = std::make_unique<HostKernel::JitState>();
  result->jit_->jit = std::move(*jit);
  result->kernel_ = std::move(kernel);
  return result;
}

namespace {

// `kernel` as optimised LLVM IR for the host, in `context`, without machine code, and the
// target machine it was optimised for.
struct OptimizedModule {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<llvm::Module> module;
};

Expected<OptimizedModule> OptimizedHostModule(const emitters::KernelIR& kernel,
                                              llvm::LLVMContext& context) {
  InitializeLlvm();
  auto machine_builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine_builder) return MakeError(ErrorCode::kInternal, "cannot describe the host CPU");
  auto machine = machine_builder->createTargetMachine();
  if (!machine) return MakeError(ErrorCode::kInternal, "cannot create a host target machine");
  TS_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                      BuildModule(kernel, context, **machine));
  OptimizeModule(*module, **machine);
  return OptimizedModule{std::move(*machine), std::move(module)};
}

}  // namespace

Expected<std::string> HostLlvmIr(const emitters::KernelIR& kernel) {
  llvm::LLVMContext context;
  TS_ASSIGN_OR_RETURN(OptimizedModule optimized, OptimizedHostModule(kernel, context));
  return ModuleText(*optimized.module);
}

Expected<CodeCounts> CountHostCode(const emitters::KernelIR& kernel) {
  llvm::LLVMContext context;
  TS_ASSIGN_OR_RETURN(OptimizedModule optimized, OptimizedHostModule(kernel, context));
  llvm::Function* function = optimized.module->getFunction(kernel.name);
  if (function == nullptr) {
    return MakeError(ErrorCode::kInternal, "no function '" + kernel.name + "' in the module");
  }
  return CountExecutedMachineCode(*function, *optimized.machine);
}

void HostKernel::Run(std::span<void* const> buffers, int threads) const {
  int64_t blocks = kernel_.launch.block_count();
  ThreadPool& pool = ThreadPool::Default();
  int workers = threads > 0 ? threads : pool.size();
  // A few tasks per worker balance uneven blocks without much scheduling overhead.
  int64_t tasks = std::min<int64_t>(blocks, static_cast<int64_t>(workers) * 4);
  pool.ParallelFor(
      tasks,
      [&](int64_t task) {
        int64_t first = blocks * task / tasks;
        int64_t end = blocks * (task + 1) / tasks;
        entry_(buffers.data(), first, end);
      },
      workers);
}

Expected<std::vector<hlo::Literal>> HostKernel::Run(std::span<const hlo::Literal> arguments,
                                                    int threads) const {
  std::vector<std::unique_ptr<AlignedBuffer>> storage;
  std::vector<void*> pointers;
  for (const emitters::KernelBuffer& buffer : kernel_.buffers) {
    TS_ASSIGN_OR_RETURN(hlo::PhysicalLayout physical, hlo::PhysicalLayout::Create(buffer.shape));
    auto allocation = std::make_unique<AlignedBuffer>(physical.byte_size());
    if (buffer.is_parameter()) {
      if (buffer.index >= static_cast<int64_t>(arguments.size())) {
        return InvalidArgument("missing argument " + std::to_string(buffer.index));
      }
      const hlo::Literal& argument = ArrayLeaf(arguments[buffer.index], buffer.leaf);
      if (!argument.shape().EqualsIgnoringLayout(buffer.shape)) {
        return InvalidArgument("argument " + std::to_string(buffer.index) + " is " +
                               hlo::ShapeToString(argument.shape()) + ", expected " +
                               hlo::ShapeToString(buffer.shape));
      }
      // Same logical elements, laid out as the kernel expects.
      hlo::Literal relaid(buffer.shape);
      std::memcpy(relaid.bytes().data(), argument.bytes().data(), argument.bytes().size());
      TS_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, hlo::ToPhysicalBuffer(relaid));
      std::memcpy(allocation->data, bytes.data(), bytes.size());
    } else if (buffer.aliases >= 0) {
      // Updated in place: the output starts as the input it aliases (same bytes).
      const AlignedBuffer& input = *storage.at(buffer.aliases);
      std::memcpy(allocation->data, input.data, std::min(input.size, allocation->size));
    } else if (buffer.fill) {
      // Blocks accumulate into it with atomics: it starts at the reducer's identity.
      TS_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                          hlo::FilledPhysicalBuffer(buffer.shape, *buffer.fill));
      std::memcpy(allocation->data, bytes.data(), std::min(bytes.size(), allocation->size));
    }
    pointers.push_back(allocation->data);
    storage.push_back(std::move(allocation));
  }
  Run(pointers, threads);
  std::vector<hlo::Literal> outputs;
  for (size_t i = 0; i < kernel_.buffers.size(); ++i) {
    const emitters::KernelBuffer& buffer = kernel_.buffers[i];
    if (!buffer.is_output) continue;
    std::span<const uint8_t> bytes(static_cast<const uint8_t*>(storage[i]->data), storage[i]->size);
    TS_ASSIGN_OR_RETURN(hlo::Literal output, hlo::FromPhysicalBuffer(buffer.shape, bytes));
    outputs.push_back(std::move(output));
  }
  return outputs;
}

std::string HostToolchainVersion() { return "LLVM " LLVM_VERSION_STRING; }

}  // namespace tilesmith::codegen
