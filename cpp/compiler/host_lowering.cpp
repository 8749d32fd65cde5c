// The host lowering: the work-item context threaded through the module's functions, the
// work-item functions and barriers over it, static __local variables as offsets into the
// group's memory. The entries and the table are host_entries.cpp's.
#include "host_lowering.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "host_builtins.hpp"
#include "host_entries.hpp"
#include "kernel_signature.hpp"
#include "work_item_context.hpp"
#include "work_item_coroutine.hpp"

namespace zehal::compiler {

namespace {

// The work-item functions of OpenCL C 1.2 (and 2.0's enqueued local size).
enum class Query { global_id, local_id, group_id, local_size, num_groups, global_size, global_offset, work_dim };

std::optional<Query> query_of(llvm::StringRef name) {
    static const std::map<std::string, Query, std::less<>> kQueries{
        {"_Z13get_global_idj", Query::global_id},
        {"_Z12get_local_idj", Query::local_id},
        {"_Z12get_group_idj", Query::group_id},
        {"_Z14get_local_sizej", Query::local_size},
        {"_Z23get_enqueued_local_sizej", Query::local_size},
        {"_Z14get_num_groupsj", Query::num_groups},
        {"_Z15get_global_sizej", Query::global_size},
        {"_Z17get_global_offsetj", Query::global_offset},
        {"_Z12get_work_dimv", Query::work_dim},
    };
    auto it = kQueries.find(name);
    return it == kQueries.end() ? std::nullopt : std::optional<Query>(it->second);
}

bool is_barrier(llvm::StringRef name) { return name == "_Z7barrierj" || name.startswith("_Z18work_group_barrierj"); }

bool is_fence(llvm::StringRef name) {
    return name == "_Z9mem_fencej" || name == "_Z14read_mem_fencej" || name == "_Z15write_mem_fencej";
}

// A uint64_t field of the context (`offset` + 8 * `index`).
llvm::Value* load_field(llvm::IRBuilder<>& b, llvm::Value* context, uint64_t offset, llvm::Value* index) {
    llvm::Value* byte = b.CreateAdd(b.getInt64(offset), b.CreateMul(index, b.getInt64(8)));
    llvm::Value* at = b.CreateInBoundsGEP(b.getInt8Ty(), context, byte);
    return b.CreateLoad(b.getInt64Ty(), b.CreateBitCast(at, b.getInt64Ty()->getPointerTo()));
}

// The value of `query` in dimension `dim` (an i32): out-of-range dimensions answer 0 for
// ids and offsets, 1 for sizes and counts (OpenCL C 1.2, 6.12.1).
llvm::Value* emit_query(llvm::IRBuilder<>& b, llvm::Value* context, Query query, llvm::Value* dim) {
    if (query == Query::work_dim) {
        return b.CreateTrunc(load_field(b, context, kWorkDimOffset, b.getInt64(0)), b.getInt32Ty());
    }
    llvm::Value* in_range = b.CreateICmpULT(dim, b.getInt32(3));
    llvm::Value* index = b.CreateZExt(b.CreateSelect(in_range, dim, b.getInt32(0)), b.getInt64Ty());
    auto field = [&](uint64_t offset) { return load_field(b, context, offset, index); };
    llvm::Value* value = nullptr;
    bool is_size = false;
    switch (query) {
        case Query::global_id:
            value = b.CreateAdd(
                b.CreateAdd(b.CreateMul(field(kGroupIdOffset), field(kLocalSizeOffset)), field(kLocalIdOffset)),
                field(kGlobalOffsetOffset));
            break;
        case Query::local_id:
            value = field(kLocalIdOffset);
            break;
        case Query::group_id:
            value = field(kGroupIdOffset);
            break;
        case Query::global_offset:
            value = field(kGlobalOffsetOffset);
            break;
        case Query::local_size:
            value = field(kLocalSizeOffset);
            is_size = true;
            break;
        case Query::num_groups:
            value = field(kNumGroupsOffset);
            is_size = true;
            break;
        case Query::global_size:
            value = b.CreateMul(field(kNumGroupsOffset), field(kLocalSizeOffset));
            is_size = true;
            break;
        case Query::work_dim:
            break;
    }
    return b.CreateSelect(in_range, value, b.getInt64(is_size ? 1 : 0));
}

// OpenCL C 2.0's casts of a generic pointer to a named space (the translator's
// __to_global, __to_local, __to_private). On the host every space is process memory, so
// the space of a pointer is where it points: into the group's __local memory, into the
// work-item's stack or its coroutine frame (its private memory), else global memory. The cast gives the pointer,
// or null when it points elsewhere (and null for null).
enum class GenericCast { to_global, to_local, to_private };

std::optional<GenericCast> generic_cast_of(llvm::StringRef name) {
    if (name == "__to_global") return GenericCast::to_global;
    if (name == "__to_local") return GenericCast::to_local;
    if (name == "__to_private") return GenericCast::to_private;
    return std::nullopt;
}

llvm::Value* emit_generic_cast(llvm::IRBuilder<>& b, llvm::Value* context, GenericCast cast, llvm::Value* pointer,
                               llvm::Type* result) {
    auto field = [&](uint64_t offset) { return load_field(b, context, offset, b.getInt64(0)); };
    // [begin, begin + bytes) holds p when p - begin < bytes, unsigned.
    auto inside = [&](llvm::Value* p, llvm::Value* begin, llvm::Value* bytes) {
        return b.CreateICmpULT(b.CreateSub(p, begin), bytes);
    };
    llvm::Value* p = b.CreatePtrToInt(pointer, b.getInt64Ty());
    llvm::Value* in_local = inside(p, field(kLocalMemoryOffset), field(kLocalBytesOffset));
    llvm::Value* private_begin = field(kPrivateBeginOffset);
    llvm::Value* frame_begin = field(kFrameBeginOffset);
    llvm::Value* in_private = b.CreateOr(inside(p, private_begin, b.CreateSub(field(kPrivateEndOffset), private_begin)),
                                         inside(p, frame_begin, b.CreateSub(field(kFrameEndOffset), frame_begin)));
    llvm::Value* keep = nullptr;
    switch (cast) {
        case GenericCast::to_global:
            keep = b.CreateNot(b.CreateOr(in_local, in_private));
            break;
        case GenericCast::to_local:
            keep = in_local;
            break;
        case GenericCast::to_private:
            keep = in_private;
            break;
    }
    return b.CreateIntToPtr(b.CreateSelect(keep, p, b.getInt64(0)), result);
}

// Gives every defined function a last parameter, the work-item context, and passes it
// on at every call between them, and at every call through a pointer (whose target is
// such a function: function pointers are taken of them). Returns the map from old to new
// functions.
std::map<llvm::Function*, llvm::Function*> thread_context(llvm::Module& module) {
    llvm::LLVMContext& c = module.getContext();
    llvm::Type* context_type = llvm::Type::getInt8PtrTy(c);
    std::map<llvm::Function*, llvm::Function*> threaded;
    std::vector<llvm::Function*> defined;
    for (llvm::Function& f : module) {
        if (!f.isDeclaration()) {
            defined.push_back(&f);
        }
    }
    for (llvm::Function* f : defined) {
        std::vector<llvm::Type*> params(f->getFunctionType()->param_begin(), f->getFunctionType()->param_end());
        params.push_back(context_type);
        auto* type = llvm::FunctionType::get(f->getReturnType(), params, false);
        llvm::Function* g = llvm::Function::Create(type, f->getLinkage(), f->getAddressSpace(), "", &module);
        g->takeName(f);
        g->copyAttributesFrom(f);
        g->copyMetadata(f, 0);
        g->setCallingConv(llvm::CallingConv::C);
        g->getBasicBlockList().splice(g->begin(), f->getBasicBlockList());
        for (unsigned i = 0; i < f->arg_size(); ++i) {
            f->getArg(i)->replaceAllUsesWith(g->getArg(i));
            g->getArg(i)->takeName(f->getArg(i));
        }
        g->getArg(f->arg_size())->setName("zehal.context");
        threaded[f] = g;
    }
    for (auto& [old_function, function] : threaded) {
        llvm::Argument* context = function->getArg(function->arg_size() - 1);
        std::vector<llvm::CallInst*> calls;
        for (llvm::BasicBlock& block : *function) {
            for (llvm::Instruction& inst : block) {
                if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
                    calls.push_back(call);
                }
            }
        }
        for (llvm::CallInst* call : calls) {
            auto* callee = llvm::dyn_cast<llvm::Function>(call->getCalledOperand()->stripPointerCasts());
            auto it = callee != nullptr ? threaded.find(callee) : threaded.end();
            call->setCallingConv(llvm::CallingConv::C);
            llvm::FunctionCallee target;
            if (it != threaded.end()) {
                target = it->second;
            } else if (callee == nullptr && !call->isInlineAsm()) {
                std::vector<llvm::Type*> params(call->getFunctionType()->param_begin(),
                                                call->getFunctionType()->param_end());
                params.push_back(context_type);
                auto* type = llvm::FunctionType::get(call->getType(), params, false);
                llvm::Value* called = call->getCalledOperand();
                llvm::Value* pointer = llvm::CastInst::CreatePointerCast(
                    called, type->getPointerTo(called->getType()->getPointerAddressSpace()), "", call);
                target = llvm::FunctionCallee(type, pointer);
            } else {
                continue;
            }
            std::vector<llvm::Value*> args(call->arg_begin(), call->arg_end());
            args.push_back(context);
            auto* replacement = llvm::CallInst::Create(target, args, "", call);
            replacement->takeName(call);
            replacement->setDebugLoc(call->getDebugLoc());
            call->replaceAllUsesWith(replacement);
            call->eraseFromParent();
        }
    }
    // What is left are the functions' addresses (function pointers): the new functions'.
    for (auto& [old_function, function] : threaded) {
        old_function->replaceAllUsesWith(
            llvm::ConstantExpr::getPointerBitCastOrAddrSpaceCast(function, old_function->getType()));
        old_function->eraseFromParent();
    }
    return threaded;
}

// Rewrites the calls of work-item functions, generic-pointer casts, barriers and fences in
// `function`.
void lower_work_item_calls(llvm::Function& function, llvm::FunctionCallee barrier) {
    llvm::Argument* context = function.getArg(function.arg_size() - 1);
    std::vector<llvm::CallInst*> calls;
    for (llvm::BasicBlock& block : function) {
        for (llvm::Instruction& inst : block) {
            if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst); call != nullptr && call->getCalledFunction()) {
                calls.push_back(call);
            }
        }
    }
    for (llvm::CallInst* call : calls) {
        const llvm::StringRef name = call->getCalledFunction()->getName();
        llvm::IRBuilder<> b(call);
        if (auto query = query_of(name)) {
            llvm::Value* dim = call->arg_size() > 0 ? b.CreateZExtOrTrunc(call->getArgOperand(0), b.getInt32Ty())
                                                    : b.getInt32(0);
            llvm::Value* value = emit_query(b, context, *query, dim);
            call->replaceAllUsesWith(b.CreateZExtOrTrunc(value, call->getType()));
            call->eraseFromParent();
        } else if (is_barrier(name)) {
            llvm::CallInst* replacement = b.CreateCall(barrier, {context});
            replacement->addFnAttr(llvm::Attribute::Convergent);
            call->eraseFromParent();
        } else if (auto cast = generic_cast_of(name); cast && call->arg_size() == 1 &&
                                                      call->getArgOperand(0)->getType()->isPointerTy() &&
                                                      call->getType()->isPointerTy()) {
            call->replaceAllUsesWith(emit_generic_cast(b, context, *cast, call->getArgOperand(0), call->getType()));
            call->eraseFromParent();
        } else if (is_fence(name)) {
            b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
            call->eraseFromParent();
        }
    }
}

// The instruction computing `constant` (a constant expression using a __local variable),
// inserted before `before`; its operands are expanded too.
llvm::Instruction* expand(llvm::ConstantExpr* constant, llvm::Instruction* before) {
    llvm::Instruction* inst = constant->getAsInstruction(before);
    for (unsigned i = 0; i < inst->getNumOperands(); ++i) {
        if (auto* operand = llvm::dyn_cast<llvm::ConstantExpr>(inst->getOperand(i))) {
            inst->setOperand(i, expand(operand, inst));
        }
    }
    return inst;
}

bool uses_local(const llvm::Constant* constant) {
    if (const auto* global = llvm::dyn_cast<llvm::GlobalVariable>(constant)) {
        return global->getAddressSpace() == kLocalSpace;
    }
    for (const llvm::Use& operand : constant->operands()) {
        if (const auto* c = llvm::dyn_cast<llvm::Constant>(operand.get()); c != nullptr && uses_local(c)) {
            return true;
        }
    }
    return false;
}

// Static __local variables become offsets into the group's memory (the context's
// local_memory). Returns the bytes a group needs.
uint64_t lower_local_variables(llvm::Module& module) {
    const llvm::DataLayout& layout = module.getDataLayout();
    // Constant expressions over __local variables become instructions first.
    for (llvm::Function& function : module) {
        for (llvm::BasicBlock& block : function) {
            for (llvm::Instruction& inst : block) {
                for (unsigned i = 0; i < inst.getNumOperands(); ++i) {
                    auto* constant = llvm::dyn_cast<llvm::ConstantExpr>(inst.getOperand(i));
                    if (constant == nullptr || !uses_local(constant)) {
                        continue;
                    }
                    llvm::Instruction* before = &inst;
                    if (auto* phi = llvm::dyn_cast<llvm::PHINode>(&inst)) {
                        before = phi->getIncomingBlock(i)->getTerminator();
                    }
                    inst.setOperand(i, expand(constant, before));
                }
            }
        }
    }
    uint64_t bytes = 0;
    std::vector<llvm::GlobalVariable*> locals;
    for (llvm::GlobalVariable& global : module.globals()) {
        if (global.getAddressSpace() == kLocalSpace) {
            locals.push_back(&global);
        }
    }
    for (llvm::GlobalVariable* global : locals) {
        const uint64_t align = std::max<uint64_t>(global->getAlign().valueOrOne().value(), 16);
        const uint64_t offset = (bytes + align - 1) / align * align;
        bytes = offset + layout.getTypeAllocSize(global->getValueType());
        std::map<llvm::Function*, llvm::Value*> address_in;
        std::vector<llvm::Use*> uses;
        for (llvm::Use& use : global->uses()) {
            uses.push_back(&use);
        }
        for (llvm::Use* use : uses) {
            auto* inst = llvm::dyn_cast<llvm::Instruction>(use->getUser());
            if (inst == nullptr) {
                continue;  // an initializer of another __local variable: none in OpenCL C
            }
            llvm::Function* function = inst->getFunction();
            llvm::Value*& address = address_in[function];
            if (address == nullptr) {
                llvm::IRBuilder<> b(&*function->getEntryBlock().getFirstInsertionPt());
                llvm::Argument* context = function->getArg(function->arg_size() - 1);
                llvm::Value* slot = b.CreateInBoundsGEP(b.getInt8Ty(), context, b.getInt64(kLocalMemoryOffset));
                llvm::Value* base = b.CreateLoad(b.getInt8PtrTy(),
                                                 b.CreateBitCast(slot, b.getInt8PtrTy()->getPointerTo()));
                llvm::Value* at = b.CreateInBoundsGEP(b.getInt8Ty(), base, b.getInt64(offset));
                address = b.CreatePointerBitCastOrAddrSpaceCast(at, global->getType());
            }
            use->set(address);
        }
        if (global->use_empty()) {
            global->eraseFromParent();
        }
    }
    return bytes;
}

// Vector loads and stores keep only their element's alignment, and pointer parameters
// promise none (the translator marks a float4* parameter `align 16`, from which the
// optimiser would raise the accesses' alignment again). OpenCL asks a vector pointer to be
// aligned to the whole vector, but GPUs run kernels on buffers aligned only to the element
// (the conformance suite passes such buffers), where an aligned vector instruction of the
// host faults. Unaligned vector instructions cost nothing on aligned data.
void relax_vector_alignment(llvm::Module& module) {
    const llvm::DataLayout& layout = module.getDataLayout();
    auto element_align = [&](llvm::Type* type) {
        return layout.getABITypeAlign(llvm::cast<llvm::VectorType>(type)->getElementType());
    };
    for (llvm::Function& function : module) {
        for (unsigned i = 0; i < function.arg_size(); ++i) {
            function.removeParamAttr(i, llvm::Attribute::Alignment);
        }
        for (llvm::BasicBlock& block : function) {
            for (llvm::Instruction& inst : block) {
                if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
                    for (unsigned i = 0; i < call->arg_size(); ++i) {
                        call->removeParamAttr(i, llvm::Attribute::Alignment);
                    }
                } else if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst); load && load->getType()->isVectorTy()) {
                    load->setAlignment(std::min(load->getAlign(), element_align(load->getType())));
                } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
                           store && store->getValueOperand()->getType()->isVectorTy()) {
                    store->setAlignment(
                        std::min(store->getAlign(), element_align(store->getValueOperand()->getType())));
                }
            }
        }
    }
}

// The table the module exports as kFunctionTableSymbol: the count, then the name and
// address of each function of `functions` (their lowered forms, which take the context last).
void add_function_table(llvm::Module& module, const std::vector<llvm::Function*>& functions) {
    llvm::LLVMContext& c = module.getContext();
    llvm::Type* i64 = llvm::Type::getInt64Ty(c);
    llvm::Type* byte_pointer = llvm::Type::getInt8PtrTy(c);
    auto* row_type = llvm::StructType::get(c, {byte_pointer, byte_pointer});
    std::vector<llvm::Constant*> rows;
    for (llvm::Function* f : functions) {
        llvm::Constant* name = llvm::ConstantDataArray::getString(c, f->getName());
        auto* text = new llvm::GlobalVariable(module, name->getType(), true, llvm::GlobalValue::PrivateLinkage, name,
                                              "zehal.function_name");
        rows.push_back(llvm::ConstantStruct::get(row_type, {llvm::ConstantExpr::getBitCast(text, byte_pointer),
                                                            llvm::ConstantExpr::getBitCast(f, byte_pointer)}));
    }
    auto* rows_type = llvm::ArrayType::get(row_type, rows.size());
    auto* table_type = llvm::StructType::get(c, {i64, rows_type});
    auto* table = llvm::ConstantStruct::get(
        table_type, {llvm::ConstantInt::get(i64, rows.size()), llvm::ConstantArray::get(rows_type, rows)});
    new llvm::GlobalVariable(module, table_type, true, llvm::GlobalValue::ExternalLinkage, table, kFunctionTableSymbol);
}

}  // namespace

ze_result_t lower_for_host(llvm::Module& module, const llvm::DataLayout& layout, const std::string& triple,
                           std::string* log) {
    for (const KernelInfo& kernel : read_kernels(module)) {
        for (const ArgInfo& arg : kernel.args) {
            if (arg.kind == ArgKind::image || arg.kind == ArgKind::sampler) {
                *log = "kernel " + kernel.name + ": images and samplers are not supported on the host";
                return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
            }
        }
    }
    std::vector<llvm::Function*> kernels = kernel_functions(module);
    module.setDataLayout(layout);
    module.setTargetTriple(triple);
    const auto threaded = thread_context(module);
    for (llvm::Function*& kernel : kernels) {
        kernel = threaded.at(kernel);
    }
    llvm::LLVMContext& c = module.getContext();
    auto* barrier_type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {llvm::Type::getInt8PtrTy(c)}, false);
    // A marker until the entries are made: the suspend points of the kernels' coroutines.
    llvm::FunctionCallee barrier = module.getOrInsertFunction("zehal.barrier", barrier_type);
    for (auto& [old_function, function] : threaded) {
        lower_work_item_calls(*function, barrier);
    }
    // The functions kernels may call through pointers: those the module exports, not kernels,
    // that reach no barrier (a work-item cannot suspend inside a call through a pointer).
    std::vector<llvm::Function*> callable;
    for (auto& [old_function, function] : threaded) {
        if (!function->hasLocalLinkage() && std::find(kernels.begin(), kernels.end(), function) == kernels.end() &&
            !reaches_barrier(*function, llvm::cast<llvm::Function>(barrier.getCallee()))) {
            callable.push_back(function);
        }
    }
    const uint64_t local_bytes = lower_local_variables(module);
    relax_vector_alignment(module);
    for (llvm::Function& function : module) {
        function.setCallingConv(llvm::CallingConv::C);
        if (function.isDeclaration() && function.getName().startswith("_Z") && define_builtin(function)) {
            function.setLinkage(llvm::GlobalValue::InternalLinkage);
            function.addFnAttr(llvm::Attribute::AlwaysInline);
        } else if (!function.isDeclaration()) {
            function.setLinkage(llvm::GlobalValue::InternalLinkage);
        }
    }
    std::vector<bool> per_work_item;
    auto* barrier_function = llvm::cast<llvm::Function>(barrier.getCallee());
    for (llvm::Function* kernel : kernels) {
        per_work_item.push_back(reaches_barrier(*kernel, barrier_function));
    }
    if (ze_result_t r = add_entries(module, kernels, per_work_item, local_bytes, barrier_function, log);
        r != ZE_RESULT_SUCCESS) {
        return r;
    }
    add_function_table(module, callable);
    // The barriers left are in functions no entry calls any more (their callers' copies
    // were inlined into the coroutines): they never run.
    while (!barrier_function->use_empty()) {
        llvm::cast<llvm::Instruction>(barrier_function->user_back())->eraseFromParent();
    }
    barrier_function->eraseFromParent();
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
