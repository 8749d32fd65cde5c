// emit_ptx: the translated module retargeted to NVPTX (its address spaces renumbered,
// printf as CUDA's vprintf), __local arguments turned into offsets into dynamic shared memory, kernels marked in
// nvvm.annotations, libclc's builtins linked in, optimised (O2) and printed as PTX by
// LLVM's NVPTX backend.
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <array>
#include <set>

#include "host_builtins.hpp"
#include "kernel_signature.hpp"
#include "llvm_setup.hpp"
#include "module_cache.hpp"
#include "ptx_header.hpp"
#include "nvptx_address_spaces.hpp"
#include "nvptx_printf.hpp"
#include "program_impl.hpp"

namespace zehal::compiler {

namespace {

// Bumped when the lowering changes the PTX it makes for a program.
constexpr std::string_view kPtxFormat = "ptx-v5";
constexpr const char* kTriple = "nvptx64-nvidia-cuda";
constexpr const char* kDynamicShared = "zehal_dynamic_shared";
constexpr const char* kGlobalOffset = "zehal_global_offset";
constexpr const char* kGetGlobalOffset = "_Z17get_global_offsetj";
constexpr const char* kGetGlobalId = "_Z13get_global_idj";
// Compute capabilities, newest first: the first LLVM knows at or below the one asked.
constexpr std::array<uint32_t, 14> kKnownSms{90, 89, 87, 86, 80, 75, 72, 70, 62, 61, 60, 53, 52, 50};

ze_result_t fail(std::string* log, const std::string& why) {
    *log = why;
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
}

// `kernel` with each __local pointer parameter replaced by a 64-bit byte offset into the
// launch's dynamic shared memory (the extern __shared__ array zehal_dynamic_shared).
llvm::Function* lower_local_arguments(llvm::Function* kernel, llvm::GlobalVariable* shared) {
    llvm::FunctionType* old_type = kernel->getFunctionType();
    std::vector<llvm::Type*> params;
    bool any = false;
    for (llvm::Type* type : old_type->params()) {
        const bool local = type->isPointerTy() && type->getPointerAddressSpace() == kLocalSpace;
        any = any || local;
        params.push_back(local ? llvm::Type::getInt64Ty(kernel->getContext()) : type);
    }
    if (!any) {
        return kernel;
    }
    auto* type = llvm::FunctionType::get(old_type->getReturnType(), params, false);
    llvm::Function* g = llvm::Function::Create(type, kernel->getLinkage(), kernel->getAddressSpace(), "",
                                               kernel->getParent());
    g->takeName(kernel);
    g->copyMetadata(kernel, 0);
    g->setCallingConv(kernel->getCallingConv());
    g->getBasicBlockList().splice(g->begin(), kernel->getBasicBlockList());
    llvm::IRBuilder<> b(&*g->getEntryBlock().getFirstInsertionPt());
    for (unsigned i = 0; i < kernel->arg_size(); ++i) {
        llvm::Argument* old_arg = kernel->getArg(i);
        llvm::Argument* arg = g->getArg(i);
        if (old_arg->getType() == arg->getType()) {
            old_arg->replaceAllUsesWith(arg);
            g->addParamAttrs(i, llvm::AttrBuilder(kernel->getContext(), kernel->getAttributes().getParamAttrs(i)));
        } else {
            llvm::Value* base = b.CreatePointerCast(shared, b.getInt8Ty()->getPointerTo(kLocalSpace));
            llvm::Value* at = b.CreateInBoundsGEP(b.getInt8Ty(), base, arg);
            old_arg->replaceAllUsesWith(b.CreatePointerCast(at, old_arg->getType()));
        }
        arg->takeName(old_arg);
    }
    kernel->eraseFromParent();
    return g;
}

// `kernel` behind an entry of its name that takes three more 32-bit parameters, the launch's
// global offset, stores them in `offset` (the __shared__ array get_global_offset reads; null
// when the module reads no offset) and calls it. Every work-item of the group stores the same
// values before it reads any, so no barrier is needed. The kernel becomes an internal function,
// inlined into the entry (other kernels calling it as a function still reach it).
llvm::Function* add_offset_parameters(llvm::Function* kernel, llvm::GlobalVariable* offset) {
    llvm::LLVMContext& c = kernel->getContext();
    llvm::FunctionType* old_type = kernel->getFunctionType();
    std::vector<llvm::Type*> params(old_type->param_begin(), old_type->param_end());
    params.insert(params.end(), 3, llvm::Type::getInt32Ty(c));
    auto* type = llvm::FunctionType::get(old_type->getReturnType(), params, false);
    llvm::Function* entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, kernel->getAddressSpace(),
                                                   "", kernel->getParent());
    entry->takeName(kernel);
    entry->copyMetadata(kernel, 0);
    kernel->setName(entry->getName() + ".body");
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
    kernel->setCallingConv(llvm::CallingConv::C);
    kernel->removeFnAttr(llvm::Attribute::NoInline);  // the SPIR-V's DontInline: the entry is its own
    kernel->removeFnAttr(llvm::Attribute::OptimizeNone);
    kernel->addFnAttr(llvm::Attribute::AlwaysInline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", entry));
    const unsigned n = old_type->getNumParams();
    if (offset != nullptr) {
        for (unsigned d = 0; d < 3; ++d) {
            b.CreateStore(entry->getArg(n + d), b.CreateConstInBoundsGEP2_32(offset->getValueType(), offset, 0, d));
        }
    }
    std::vector<llvm::Value*> args;
    for (unsigned i = 0; i < n; ++i) {
        entry->addParamAttrs(i, llvm::AttrBuilder(c, kernel->getAttributes().getParamAttrs(i)));
        entry->getArg(i)->setName(kernel->getArg(i)->getName());
        args.push_back(entry->getArg(i));
    }
    llvm::CallInst* call = b.CreateCall(kernel, args);
    call->setCallingConv(llvm::CallingConv::C);
    b.CreateRetVoid();
    return entry;
}

// Marks `kernel` as a kernel in nvvm.annotations (with its reqd_work_group_size).
void annotate_kernel(llvm::Module& module, llvm::Function* kernel) {
    llvm::LLVMContext& c = module.getContext();
    llvm::NamedMDNode* annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
    auto i32 = [&](uint32_t v) {
        return llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(c), v));
    };
    annotations->addOperand(
        llvm::MDNode::get(c, {llvm::ConstantAsMetadata::get(kernel), llvm::MDString::get(c, "kernel"), i32(1)}));
    if (llvm::MDNode* reqd = kernel->getMetadata("reqd_work_group_size")) {
        static constexpr std::array<const char*, 3> kNames{"reqntidx", "reqntidy", "reqntidz"};
        for (unsigned d = 0; d < 3 && d < reqd->getNumOperands(); ++d) {
            if (auto* v = llvm::mdconst::dyn_extract<llvm::ConstantInt>(reqd->getOperand(d))) {
                annotations->addOperand(
                    llvm::MDNode::get(c, {llvm::ConstantAsMetadata::get(kernel), llvm::MDString::get(c, kNames[d]),
                                          i32(static_cast<uint32_t>(v->getZExtValue()))}));
            }
        }
    }
}

// get_work_dim() from the launch's shape: the highest dimension with more than one
// work-item (as on the host).
void define_work_dim(llvm::Function& f) {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(f.getContext(), "entry", &f));
    llvm::Module* m = f.getParent();
    auto read = [&](llvm::Intrinsic::ID id) { return b.CreateCall(llvm::Intrinsic::getDeclaration(m, id)); };
    llvm::Value* z = b.CreateMul(read(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z),
                                 read(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z));
    llvm::Value* y = b.CreateMul(read(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y),
                                 read(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y));
    llvm::Value* dim = b.CreateSelect(b.CreateICmpUGT(z, b.getInt32(1)), b.getInt32(3),
                                      b.CreateSelect(b.CreateICmpUGT(y, b.getInt32(1)), b.getInt32(2), b.getInt32(1)));
    b.CreateRet(dim);
}

// get_global_offset(dim) (the launch's, from `offset`) or, with `with_id`, get_global_id(dim):
// group id × group size + local id + offset, which libclc's get_global_id lacks. 0 for a
// dimension past the third (OpenCL C 1.2, 6.12.1).
void define_global_query(llvm::Function& f, llvm::GlobalVariable* offset, bool with_id) {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(f.getContext(), "entry", &f));
    llvm::Module* m = f.getParent();
    llvm::Value* dim = f.getArg(0);
    llvm::Value* in_range = b.CreateICmpULT(dim, b.getInt32(3));
    llvm::Value* index = b.CreateSelect(in_range, dim, b.getInt32(0));
    // The special register of dimension `index`, as a 64-bit value.
    auto sreg = [&](llvm::Intrinsic::ID x, llvm::Intrinsic::ID y, llvm::Intrinsic::ID z) {
        auto read = [&](llvm::Intrinsic::ID id) { return b.CreateCall(llvm::Intrinsic::getDeclaration(m, id)); };
        llvm::Value* v = b.CreateSelect(b.CreateICmpEQ(index, b.getInt32(0)), read(x),
                                        b.CreateSelect(b.CreateICmpEQ(index, b.getInt32(1)), read(y), read(z)));
        return b.CreateZExt(v, b.getInt64Ty());
    };
    llvm::Value* at = b.CreateInBoundsGEP(offset->getValueType(), offset, {b.getInt32(0), index});
    llvm::Value* value = b.CreateZExt(b.CreateLoad(b.getInt32Ty(), at), b.getInt64Ty());
    if (with_id) {
        namespace nvvm = llvm::Intrinsic;
        llvm::Value* group = sreg(nvvm::nvvm_read_ptx_sreg_ctaid_x, nvvm::nvvm_read_ptx_sreg_ctaid_y,
                                  nvvm::nvvm_read_ptx_sreg_ctaid_z);
        llvm::Value* size = sreg(nvvm::nvvm_read_ptx_sreg_ntid_x, nvvm::nvvm_read_ptx_sreg_ntid_y,
                                 nvvm::nvvm_read_ptx_sreg_ntid_z);
        llvm::Value* local = sreg(nvvm::nvvm_read_ptx_sreg_tid_x, nvvm::nvvm_read_ptx_sreg_tid_y,
                                  nvvm::nvvm_read_ptx_sreg_tid_z);
        value = b.CreateAdd(b.CreateAdd(b.CreateMul(group, size), local), value);
    }
    b.CreateRet(b.CreateSelect(in_range, b.CreateZExtOrTrunc(value, f.getReturnType()),
                               llvm::ConstantInt::get(f.getReturnType(), 0)));
}

// The builtins zehal defines itself on NVPTX: atomics (libclc lacks the 64-bit ones),
// get_work_dim(), get_global_offset() and get_global_id() over the launch's global offset
// (`offset`, null when the module calls neither), and to_global / to_local / to_private
// (libclc lacks OpenCL 2.0's).
void define_target_builtins(llvm::Module& module, llvm::GlobalVariable* offset) {
    for (llvm::Function& f : module) {
        if (!f.isDeclaration()) {
            continue;
        }
        if (f.getName() == kGetGlobalOffset || f.getName() == kGetGlobalId) {
            define_global_query(f, offset, f.getName() == kGetGlobalId);
        } else if (f.getName() == "_Z12get_work_dimv") {
            define_work_dim(f);
        } else if (!define_atomic_builtin(f) && !define_generic_cast(f)) {
            continue;
        }
        f.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
}

ze_result_t compile_ptx(const ProgramImpl& program, llvm::TargetMachine& machine, std::string* ptx, std::string* log) {
    TranslatedModule translated;
    if (ze_result_t r = program.translate(&translated, log); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    llvm::Module& module = *translated.module;
    llvm::LLVMContext& c = module.getContext();
    module.setTargetTriple(kTriple);
    module.setDataLayout(machine.createDataLayout());
    if (ze_result_t r = remap_to_nvptx_address_spaces(module, log); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    if (ze_result_t r = lower_printf(module, log); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    std::vector<llvm::Function*> kernels = kernel_functions(module);
    auto* shared = new llvm::GlobalVariable(module, llvm::ArrayType::get(llvm::Type::getInt8Ty(c), 0), false,
                                            llvm::GlobalValue::ExternalLinkage, nullptr, kDynamicShared, nullptr,
                                            llvm::GlobalValue::NotThreadLocal, kLocalSpace);
    shared->setAlignment(llvm::Align(16));
    // The launch's global offset, in a __shared__ array its entries fill, where read at all.
    llvm::GlobalVariable* offset = nullptr;
    if (module.getFunction(kGetGlobalOffset) != nullptr || module.getFunction(kGetGlobalId) != nullptr) {
        auto* type = llvm::ArrayType::get(llvm::Type::getInt32Ty(c), 3);
        offset = new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::UndefValue::get(type), kGlobalOffset, nullptr,
                                          llvm::GlobalValue::NotThreadLocal, kLocalSpace);
    }
    std::set<std::string> kernel_names;
    for (llvm::Function*& kernel : kernels) {
        kernel = add_offset_parameters(lower_local_arguments(kernel, shared), offset);
        kernel->setCallingConv(llvm::CallingConv::PTX_Kernel);
        annotate_kernel(module, kernel);
        kernel_names.insert(kernel->getName().str());
    }
    for (llvm::Function& f : module) {
        if (f.getCallingConv() == llvm::CallingConv::SPIR_FUNC) {
            f.setCallingConv(llvm::CallingConv::C);
        }
        for (llvm::BasicBlock& block : f) {
            for (llvm::Instruction& inst : block) {
                if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
                    call->setCallingConv(llvm::CallingConv::C);
                }
            }
        }
    }
    define_target_builtins(module, offset);
    rename_builtins_for_libclc(module);
    llvm::SMDiagnostic diagnostic;
    // Loaded lazily: only the builtins the kernels call are read and linked.
    std::unique_ptr<llvm::Module> libclc = llvm::getLazyIRFileModule(ZEHAL_LIBCLC_NVPTX, diagnostic, c);
    if (!libclc) {
        return fail(log,
                    std::string("cannot read libclc (") + ZEHAL_LIBCLC_NVPTX + "): " + diagnostic.getMessage().str());
    }
    libclc->setTargetTriple(kTriple);
    libclc->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(libclc), llvm::Linker::LinkOnlyNeeded)) {
        return fail(log, "cannot link libclc's builtins");
    }
    // The kernels and the program-scope variables the module exports stay visible: the
    // driver finds them by name (cuModuleGetFunction, cuModuleGetGlobal).
    std::set<std::string> exported = std::move(kernel_names);
    for (const GlobalInfo& g : program.globals()) exported.insert(g.name);
    llvm::internalizeModule(module, [&](const llvm::GlobalValue& value) {
        return exported.count(value.getName().str()) != 0 || value.getName() == kDynamicShared;
    });
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (llvm::verifyModule(module, &stream)) {
        return fail(log, "the NVPTX lowering produced invalid IR: " + stream.str());
    }
    optimize_o2(module, machine);
    for (llvm::Function& f : module) {
        if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty() && f.getName() != kVprintf) {
            return fail(log, "no NVPTX implementation of " + f.getName().str());
        }
    }
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream out(buffer);
    llvm::legacy::PassManager passes;
    if (machine.addPassesToEmitFile(passes, out, nullptr, llvm::CGFT_AssemblyFile)) {
        return fail(log, "the NVPTX target cannot emit PTX");
    }
    passes.run(module);
    std::vector<std::pair<std::string, std::string>> attributes;
    for (const KernelInfo& k : program.kernels()) attributes.emplace_back(k.name, k.attributes);
    ptx->assign(ptx_header(attributes));
    ptx->append(buffer.begin(), buffer.end());
    count_compilation();
    return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t emit_ptx(const Program& program, uint32_t sm, std::string* ptx, std::string* log) {
    std::string ignored;
    std::string* message = log != nullptr ? log : &ignored;
    message->clear();
    if (ptx == nullptr) {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    initialize_llvm_targets();
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
    if (target == nullptr) {
        return fail(message, "no NVPTX target in this LLVM: " + error);
    }
    std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(kTriple, "", ""));
    std::string cpu;
    for (uint32_t known : kKnownSms) {
        if (known <= sm && generic && generic->isCPUStringValid("sm_" + std::to_string(known))) {
            cpu = "sm_" + std::to_string(known);
            break;
        }
    }
    std::unique_ptr<llvm::TargetMachine> machine;
    if (!cpu.empty()) {
        machine.reset(target->createTargetMachine(kTriple, cpu, "", llvm::TargetOptions(), llvm::None));
    }
    if (!machine) {
        return fail(message, "no NVPTX target for sm_" + std::to_string(sm));
    }
    // Every Program is a ProgramImpl: this layer makes them all.
    const auto& impl = static_cast<const ProgramImpl&>(program);
    const CacheKey key = cache_key(program.digest(), std::string(kPtxFormat) + "-" + cpu);
    if (auto cached = cache_find("ptx", key)) {
        *ptx = *cached;
        return ZE_RESULT_SUCCESS;
    }
    std::string compiled;
    if (ze_result_t r = compile_ptx(impl, *machine, &compiled, message); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    *ptx = compiled;
    cache_store("ptx", key, std::move(compiled));
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
