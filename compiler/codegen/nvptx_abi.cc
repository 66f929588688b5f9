#include "compiler/codegen/nvptx_abi.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include "compiler/codegen/math_library.h"
#include "compiler/hlo/tiling.h"

namespace tilesmith::codegen {
namespace {

// The elemental emitter derives load and store alignment from offsets assuming buffers
// start 64-byte aligned (cuMemAlloc gives 256); the parameters promise the same.
constexpr uint64_t kBufferAlignment = 64;
constexpr unsigned kGlobalAddressSpace = 1;
constexpr unsigned kSharedAddressSpace = 3;

constexpr std::array<llvm::Intrinsic::ID, emitters::kLaunchDims> kLaunchIdIntrinsics = {
    llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,   llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
    llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z,   llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
    llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};

llvm::MDNode* Annotation(llvm::LLVMContext& context, llvm::Function* function, std::string_view key,
                         int64_t value) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(context);
  return llvm::MDNode::get(context,
                           {llvm::ValueAsMetadata::get(function), llvm::MDString::get(context, key),
                            llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32, value))});
}

}  // namespace

llvm::FunctionCallee NvptxHooks::MathFunction(llvm::Module& module, std::string_view name,
                                              llvm::Type* type) {
  return DeclareMathFunction(module, "__nv_", name, type);
}

std::string NvptxEntryName(const emitters::KernelIR& kernel) {
  std::string name = kernel.name.empty() ? "kernel" : kernel.name;
  for (char& c : name) {
    bool valid = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '$';
    if (!valid) c = '_';
  }
  if (name[0] >= '0' && name[0] <= '9') name.insert(name.begin(), '_');
  return name;
}

llvm::Function* NvptxAbi::CreateFunction(llvm::Module& module, const emitters::KernelIR& kernel) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* global_ptr = llvm::PointerType::get(context, kGlobalAddressSpace);
  std::vector<llvm::Type*> arguments(kernel.buffers.size(), global_ptr);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), arguments, false);
  llvm::Function* function =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, NvptxEntryName(kernel), module);
  for (size_t i = 0; i < kernel.buffers.size(); ++i) {
    auto arg = static_cast<unsigned>(i);
    function->getArg(arg)->setName(kernel.buffers[i].name);
    // Distinct buffers never overlap: what lets loads move past stores and vectorise.
    function->addParamAttr(arg, llvm::Attribute::NoAlias);
    function->addParamAttr(
        arg, llvm::Attribute::getWithAlignment(context, llvm::Align(kBufferAlignment)));
    if (auto physical = hlo::PhysicalLayout::Create(kernel.buffers[i].shape);
        physical && physical->byte_size() > 0) {
      function->addDereferenceableParamAttr(arg, static_cast<uint64_t>(physical->byte_size()));
    }
    if (kernel.buffers[i].is_parameter()) function->addParamAttr(arg, llvm::Attribute::ReadOnly);
  }
  function->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::BasicBlock::Create(context, "entry", function);
  return function;
}

llvm::Value* NvptxAbi::BufferPointer(llvm::IRBuilder<>&, llvm::Function* function, int64_t i) {
  return function->getArg(static_cast<unsigned>(i));
}

llvm::Value* NvptxAbi::LaunchId(llvm::IRBuilder<>& builder, int64_t which,
                                const emitters::LaunchGrid& grid) {
  int64_t size =
      which < emitters::kBlockIdX ? grid.threads[which] : grid.blocks[which - emitters::kBlockIdX];
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  llvm::Function* intrinsic = llvm::Intrinsic::getDeclaration(&module, kLaunchIdIntrinsics[which]);
  llvm::CallInst* id = builder.CreateCall(intrinsic, {});
  // Ids lie in [0, size): lets LLVM keep index math narrow and drop redundant guards.
  llvm::MDBuilder metadata(builder.getContext());
  id->setMetadata(llvm::LLVMContext::MD_range,
                  metadata.createRange(llvm::APInt(32, 0), llvm::APInt(32, size)));
  return builder.CreateZExt(id, builder.getInt64Ty());
}

void NvptxAbi::Finish(llvm::Module& module, llvm::Function* function,
                      const emitters::KernelIR& kernel) {
  llvm::LLVMContext& context = module.getContext();
  llvm::NamedMDNode* annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
  annotations->addOperand(Annotation(context, function, "kernel", 1));
  constexpr std::array<std::string_view, 3> kMaxThreads = {"maxntidx", "maxntidy", "maxntidz"};
  for (size_t i = 0; i < kMaxThreads.size(); ++i) {
    annotations->addOperand(
        Annotation(context, function, kMaxThreads[i], kernel.launch.threads[i]));
  }
}

llvm::Value* NvptxAbi::SharedBase(llvm::IRBuilder<>& builder, llvm::Function*,
                                  const emitters::KernelIR& kernel, int64_t index) {
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  const emitters::SharedAlloc& alloc = kernel.shared[index];
  std::string name = "shared." + alloc.name;
  if (llvm::GlobalVariable* existing = module.getNamedGlobal(name)) return existing;
  auto* type = llvm::ArrayType::get(builder.getInt8Ty(), static_cast<uint64_t>(alloc.bytes()));
  auto* global = new llvm::GlobalVariable(module, type, /*isConstant=*/false,
                                          llvm::GlobalValue::InternalLinkage,
                                          llvm::UndefValue::get(type), name, nullptr,
                                          llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  // Elemental addressing derives alignment from offsets assuming 64-byte aligned bases.
  global->setAlignment(llvm::Align(kBufferAlignment));
  return global;
}

void NvptxAbi::Barrier(llvm::IRBuilder<>& builder) {
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  builder.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::nvvm_barrier0), {});
}

void NvptxAbi::Fence(llvm::IRBuilder<>& builder) {
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  builder.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::nvvm_membar_gl), {});
}

llvm::Value* NvptxAbi::ShuffleXor(llvm::IRBuilder<>& builder, llvm::Value* bits, int64_t offset) {
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  llvm::Function* shuffle =
      llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32);
  // Full mask; 0x1f: lanes are numbered within the whole 32-wide warp.
  return builder.CreateCall(
      shuffle, {builder.getInt32(0xFFFFFFFFu), bits,
                builder.getInt32(static_cast<uint32_t>(offset)), builder.getInt32(0x1F)});
}

}  // namespace tilesmith::codegen
