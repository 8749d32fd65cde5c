// The work-item coroutine of a kernel with barriers (LLVM's switched-resume coroutines):
// the barrier-reaching calls inlined, an initial suspend, a suspend at each barrier and a
// final suspend at each return; the frame from the runtime (kFrameSymbol).
#include "work_item_coroutine.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <set>
#include <vector>

#include "work_item_context.hpp"

namespace zehal::compiler {

namespace {

// The blocks every suspend point leads to: `suspend` returns the handle to whoever
// started or resumed the work-item, `cleanup` is where a destroyed coroutine would go
// (the runtime never destroys one: the group's frames are dropped together).
struct SuspendTargets {
    llvm::Value* handle = nullptr;
    llvm::BasicBlock* suspend = nullptr;
    llvm::BasicBlock* cleanup = nullptr;
};

// The calls of `entry` to defined functions that reach `barrier`.
std::vector<llvm::CallBase*> barrier_reaching_calls(llvm::Function& entry, llvm::Function* barrier) {
    std::vector<llvm::CallBase*> calls;
    for (llvm::BasicBlock& block : entry) {
        for (llvm::Instruction& inst : block) {
            auto* call = llvm::dyn_cast<llvm::CallBase>(&inst);
            llvm::Function* callee = call != nullptr ? call->getCalledFunction() : nullptr;
            if (callee != nullptr && callee != barrier && !callee->isDeclaration() &&
                reaches_barrier(*callee, barrier)) {
                calls.push_back(call);
            }
        }
    }
    return calls;
}

// Whether a call in `function` or in a function it calls, directly or through others,
// names a callee for which `wanted` is true (each defined function walked once).
template <typename Wanted>
bool calls_reach(llvm::Function& function, Wanted&& wanted) {
    std::set<llvm::Function*> seen{&function};
    std::vector<llvm::Function*> work{&function};
    while (!work.empty()) {
        llvm::Function* f = work.back();
        work.pop_back();
        for (llvm::BasicBlock& block : *f) {
            for (llvm::Instruction& inst : block) {
                auto* call = llvm::dyn_cast<llvm::CallBase>(&inst);
                llvm::Function* callee = call != nullptr ? call->getCalledFunction() : nullptr;
                if (callee == nullptr) {
                    continue;
                }
                if (wanted(callee)) {
                    return true;
                }
                if (!callee->isDeclaration() && seen.insert(callee).second) {
                    work.push_back(callee);
                }
            }
        }
    }
    return false;
}

// Whether `function` calls itself, directly or through others.
bool is_recursive(llvm::Function& function) {
    return calls_reach(function, [&](llvm::Function* callee) { return callee == &function; });
}

// Inlines into `entry` every call that reaches a barrier, until its barriers are its own
// (each round inlines one level of calls; the callees are not recursive, so rounds end).
ze_result_t inline_barriers(llvm::Function& entry, llvm::Function* barrier, std::string* log) {
    for (;;) {
        std::vector<llvm::CallBase*> calls = barrier_reaching_calls(entry, barrier);
        if (calls.empty()) {
            return ZE_RESULT_SUCCESS;
        }
        for (llvm::CallBase* call : calls) {
            const std::string callee = call->getCalledFunction()->getName().str();
            if (is_recursive(*call->getCalledFunction())) {
                *log = "'" + callee + "' reaches a barrier and is recursive: not supported on the host";
                return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
            }
            llvm::InlineFunctionInfo info;
            llvm::InlineResult result = llvm::InlineFunction(*call, info);
            if (!result.isSuccess()) {
                *log = "cannot run the barriers of '" + callee + "' on the host: " + result.getFailureReason();
                return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
            }
        }
    }
}

// A suspend point where `b` is: control goes on to `resume` when the work-item is resumed.
// `final`: the work-item has ended and is never resumed.
void emit_suspend(llvm::IRBuilder<>& b, const SuspendTargets& targets, llvm::BasicBlock* resume, bool final) {
    llvm::Module& module = *b.GetInsertBlock()->getModule();
    llvm::Function* suspend = llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::coro_suspend);
    llvm::Value* state = b.CreateCall(suspend, {llvm::ConstantTokenNone::get(b.getContext()), b.getInt1(final)});
    // 0: resumed, 1: destroyed, other: suspended (return to the caller).
    llvm::SwitchInst* to = b.CreateSwitch(state, targets.suspend, 2);
    to->addCase(b.getInt8(0), resume);
    to->addCase(b.getInt8(1), targets.cleanup);
}

// The allocation, coro.begin and the initial suspend, in blocks before the entry's
// first; the static allocas move to the new first block. Returns the blocks that the
// suspend points lead to.
SuspendTargets begin_coroutine(llvm::Function& entry) {
    llvm::Module& module = *entry.getParent();
    llvm::LLVMContext& c = module.getContext();
    llvm::BasicBlock* body = &entry.getEntryBlock();
    auto* start = llvm::BasicBlock::Create(c, "coroutine.start", &entry, body);
    auto* failed = llvm::BasicBlock::Create(c, "coroutine.no_frame", &entry, body);
    auto* begin = llvm::BasicBlock::Create(c, "coroutine.begin", &entry, body);
    SuspendTargets targets;
    targets.suspend = llvm::BasicBlock::Create(c, "coroutine.suspend", &entry);
    targets.cleanup = llvm::BasicBlock::Create(c, "coroutine.cleanup", &entry);
    std::vector<llvm::AllocaInst*> allocas;
    for (llvm::Instruction& inst : *body) {
        if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst); alloca != nullptr && alloca->isStaticAlloca()) {
            allocas.push_back(alloca);
        }
    }
    for (llvm::AllocaInst* alloca : allocas) {
        alloca->moveBefore(*start, start->end());
    }
    llvm::IRBuilder<> b(start);
    llvm::Type* i64 = b.getInt64Ty();
    llvm::Value* null = llvm::ConstantPointerNull::get(b.getInt8PtrTy());
    llvm::Value* id = b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::coro_id),
                                   {b.getInt32(16), null, null, null});
    llvm::Value* size = b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::coro_size, {i64}));
    llvm::Value* align = b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::coro_align, {i64}));
    llvm::Value* context = entry.getArg(1);
    auto* frame_type = llvm::FunctionType::get(b.getInt8PtrTy(), {b.getInt8PtrTy(), i64, i64}, false);
    llvm::FunctionCallee allocate = module.getOrInsertFunction(kFrameSymbol, frame_type);
    llvm::Value* memory = b.CreateCall(allocate, {context, size, align});
    b.CreateCondBr(b.CreateICmpEQ(memory, null), failed, begin);
    b.SetInsertPoint(failed);
    b.CreateRet(null);
    b.SetInsertPoint(begin);
    targets.handle = b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::coro_begin), {id, memory});
    emit_suspend(b, targets, body, false);
    b.SetInsertPoint(targets.cleanup);
    b.CreateBr(targets.suspend);
    b.SetInsertPoint(targets.suspend);
    b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::coro_end),
                 {targets.handle, b.getInt1(false)});
    b.CreateRet(targets.handle);
    return targets;
}

// Each barrier call of `entry` becomes a suspend point.
void suspend_at_barriers(llvm::Function& entry, llvm::Function* barrier, const SuspendTargets& targets) {
    std::vector<llvm::CallBase*> barriers;
    for (llvm::BasicBlock& block : entry) {
        for (llvm::Instruction& inst : block) {
            if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst); call && call->getCalledFunction() == barrier) {
                barriers.push_back(call);
            }
        }
    }
    for (llvm::CallBase* call : barriers) {
        llvm::BasicBlock* block = call->getParent();
        llvm::BasicBlock* after = block->splitBasicBlock(call->getNextNode(), "barrier.after");
        block->getTerminator()->eraseFromParent();
        call->eraseFromParent();
        llvm::IRBuilder<> b(block);
        emit_suspend(b, targets, after, false);
    }
}

// The work-item's `returns` (those of its own code) go to a final suspend point.
void suspend_at_returns(llvm::Function& entry, const std::vector<llvm::ReturnInst*>& returns,
                        const SuspendTargets& targets) {
    llvm::LLVMContext& c = entry.getContext();
    auto* end = llvm::BasicBlock::Create(c, "work_item.end", &entry, targets.cleanup);
    auto* never = llvm::BasicBlock::Create(c, "work_item.never_resumed", &entry, targets.cleanup);
    for (llvm::ReturnInst* ret : returns) {
        llvm::BranchInst::Create(end, ret);
        ret->eraseFromParent();
    }
    llvm::IRBuilder<> b(end);
    emit_suspend(b, targets, never, true);
    b.SetInsertPoint(never);
    b.CreateUnreachable();
}

}  // namespace

bool reaches_barrier(llvm::Function& function, llvm::Function* barrier) {
    return calls_reach(function, [&](llvm::Function* callee) { return callee == barrier; });
}

ze_result_t make_work_item_coroutine(llvm::Function& entry, llvm::Function* barrier, std::string* log) {
    if (ze_result_t r = inline_barriers(entry, barrier, log); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    std::vector<llvm::ReturnInst*> returns;
    for (llvm::BasicBlock& block : entry) {
        if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator())) {
            returns.push_back(ret);
        }
    }
    const SuspendTargets targets = begin_coroutine(entry);
    suspend_at_barriers(entry, barrier, targets);
    suspend_at_returns(entry, returns, targets);
    entry.addFnAttr(llvm::Attribute::PresplitCoroutine);
    return ZE_RESULT_SUCCESS;
}

llvm::Function* add_resume_function(llvm::Module& module) {
    llvm::LLVMContext& c = module.getContext();
    llvm::Type* byte_pointer = llvm::Type::getInt8PtrTy(c);
    auto* type = llvm::FunctionType::get(llvm::Type::getInt8Ty(c), {byte_pointer}, false);
    auto* resume = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "zehal.resume", module);
    resume->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", resume));
    llvm::Value* handle = resume->getArg(0);
    b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::coro_resume), {handle});
    llvm::Value* done = b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::coro_done), {handle});
    b.CreateRet(b.CreateZExt(done, b.getInt8Ty()));
    return resume;
}

}  // namespace zehal::compiler
