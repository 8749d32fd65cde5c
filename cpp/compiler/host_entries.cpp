// Host entries: argument slots unpacked into the kernel's parameters, the work-item loop
// over a private copy of the context (so the optimiser keeps the ids in registers), the
// work-item coroutine of a kernel with barriers, the module table.
#include "host_entries.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>

#include <string>

#include "work_item_context.hpp"
#include "work_item_coroutine.hpp"

namespace zehal::compiler {

namespace {

// A by-value argument's copy, made before each call of the kernel.
struct ByValueCopy {
    llvm::Value* copy;
    llvm::Value* source;
    uint64_t bytes;
};

// The kernel's arguments from the slots `args` (an i8** of the entry), loaded where `b`
// is; by-value arguments get a private copy (an alloca of the entry), filled by
// copy_by_value() before each call.
std::vector<llvm::Value*> unpack_arguments(llvm::IRBuilder<>& b, llvm::Function* kernel, llvm::Value* args,
                                           std::vector<ByValueCopy>* copies) {
    const llvm::DataLayout& layout = kernel->getParent()->getDataLayout();
    std::vector<llvm::Value*> values;
    for (unsigned i = 0; i + 1 < kernel->arg_size(); ++i) {
        llvm::Argument* param = kernel->getArg(i);
        llvm::Type* type = param->getType();
        llvm::Value* slot_at = b.CreateInBoundsGEP(b.getInt8PtrTy(), args, b.getInt64(i));
        llvm::Value* slot = b.CreateLoad(b.getInt8PtrTy(), slot_at);
        if (param->hasByValAttr()) {
            llvm::Type* value_type = param->getParamByValType();
            llvm::AllocaInst* copy = b.CreateAlloca(value_type);
            copy->setAlignment(llvm::Align(16));
            copies->push_back({copy, slot, layout.getTypeAllocSize(value_type)});
            values.push_back(b.CreatePointerBitCastOrAddrSpaceCast(copy, type));
        } else if (type->isPointerTy()) {
            llvm::Value* pointer = b.CreateLoad(b.getInt8PtrTy(),
                                                b.CreateBitCast(slot, b.getInt8PtrTy()->getPointerTo()));
            values.push_back(b.CreatePointerBitCastOrAddrSpaceCast(pointer, type));
        } else {
            llvm::LoadInst* value = b.CreateLoad(type, b.CreateBitCast(slot, type->getPointerTo()));
            value->setAlignment(llvm::Align(1));
            values.push_back(value);
        }
    }
    return values;
}

// Fresh copies of the by-value arguments: the kernel owns and may change its copy.
void copy_by_value(llvm::IRBuilder<>& b, const std::vector<ByValueCopy>& copies) {
    for (const ByValueCopy& c : copies) {
        b.CreateMemCpy(c.copy, llvm::MaybeAlign(16), c.source, llvm::MaybeAlign(1), c.bytes);
    }
}

llvm::Value* field_address(llvm::IRBuilder<>& b, llvm::Value* context, uint64_t offset) {
    return b.CreateBitCast(b.CreateInBoundsGEP(b.getInt8Ty(), context, b.getInt64(offset)),
                           b.getInt64Ty()->getPointerTo());
}

// for (id = 0; id < count; ++id) { store id at `id_at`; body(); } with the builder left
// after the loop.
template <typename Body>
void emit_loop(llvm::IRBuilder<>& b, llvm::Value* count, llvm::Value* id_at, const Body& body) {
    llvm::Function* function = b.GetInsertBlock()->getParent();
    llvm::LLVMContext& c = function->getContext();
    llvm::BasicBlock* before = b.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(c, "loop", function);
    auto* done = llvm::BasicBlock::Create(c, "done", function);
    b.CreateCondBr(b.CreateICmpEQ(count, b.getInt64(0)), done, loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* id = b.CreatePHI(b.getInt64Ty(), 2);
    id->addIncoming(b.getInt64(0), before);
    b.CreateStore(id, id_at);
    body();
    llvm::Value* next = b.CreateAdd(id, b.getInt64(1));
    id->addIncoming(next, b.GetInsertBlock());
    b.CreateCondBr(b.CreateICmpULT(next, count), loop, done);
    b.SetInsertPoint(done);
}

// The coroutine entry of a kernel with barriers: one work-item, its arguments unpacked
// when it first runs.
ze_result_t add_work_item_entry(llvm::Module& module, llvm::Function* kernel, size_t index, llvm::Function* barrier,
                                llvm::Function** out, std::string* log) {
    llvm::LLVMContext& c = module.getContext();
    llvm::Type* byte_pointer = llvm::Type::getInt8PtrTy(c);
    auto* type = llvm::FunctionType::get(byte_pointer, {byte_pointer->getPointerTo(), byte_pointer}, false);
    auto* entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                         "zehal.entry." + std::to_string(index), module);
    entry->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", entry));
    std::vector<ByValueCopy> copies;
    std::vector<llvm::Value*> values = unpack_arguments(b, kernel, entry->getArg(0), &copies);
    copy_by_value(b, copies);
    values.push_back(entry->getArg(1));
    b.CreateCall(kernel, values);
    b.CreateRet(llvm::ConstantPointerNull::get(llvm::Type::getInt8PtrTy(c)));
    *out = entry;
    return make_work_item_coroutine(*entry, barrier, log);
}

// The group entry of a kernel without barriers: its work-items in a loop.
llvm::Function* add_group_entry(llvm::Module& module, llvm::Function* kernel, size_t index) {
    llvm::LLVMContext& c = module.getContext();
    llvm::Type* byte_pointer = llvm::Type::getInt8PtrTy(c);
    auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {byte_pointer->getPointerTo(), byte_pointer}, false);
    auto* entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                         "zehal.entry." + std::to_string(index), module);
    entry->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::Value* args = entry->getArg(0);
    llvm::Value* context_in = entry->getArg(1);
    auto* block = llvm::BasicBlock::Create(c, "entry", entry);
    llvm::IRBuilder<> b(block);
    // Inlined into the loop whatever the SPIR-V's function control says (DontInline).
    kernel->removeFnAttr(llvm::Attribute::NoInline);
    kernel->removeFnAttr(llvm::Attribute::OptimizeNone);
    kernel->addFnAttr(llvm::Attribute::AlwaysInline);
    std::vector<ByValueCopy> copies;
    // A private copy of the context: its fields do not escape, so they live in registers.
    llvm::AllocaInst* context = b.CreateAlloca(llvm::ArrayType::get(b.getInt8Ty(), sizeof(WorkItemContext)));
    context->setAlignment(llvm::Align(16));
    llvm::Value* context_bytes = b.CreateBitCast(context, byte_pointer);
    b.CreateMemCpy(context_bytes, llvm::MaybeAlign(16), context_in, llvm::MaybeAlign(8), sizeof(WorkItemContext));
    // Loaded once, before the loops: the kernel's stores cannot be taken for changes of
    // its arguments, so the loop stays free to vectorise.
    std::vector<llvm::Value*> values = unpack_arguments(b, kernel, args, &copies);
    values.push_back(context_bytes);
    llvm::Value* size[3];
    for (int d = 0; d < 3; ++d) {
        size[d] = b.CreateLoad(b.getInt64Ty(), field_address(b, context_in, kLocalSizeOffset + 8 * d));
    }
    auto id_at = [&](int d) { return field_address(b, context_bytes, kLocalIdOffset + 8 * d); };
    emit_loop(b, size[2], id_at(2), [&] {
        emit_loop(b, size[1], id_at(1), [&] {
            emit_loop(b, size[0], id_at(0), [&] {
                copy_by_value(b, copies);
                b.CreateCall(kernel, values);
            });
        });
    });
    b.CreateRetVoid();
    return entry;
}

}  // namespace

ze_result_t add_entries(llvm::Module& module, const std::vector<llvm::Function*>& kernels,
                        const std::vector<bool>& per_work_item, uint64_t local_bytes, llvm::Function* barrier,
                        std::string* log) {
    llvm::LLVMContext& c = module.getContext();
    llvm::Type* i64 = llvm::Type::getInt64Ty(c);
    llvm::Type* byte_pointer = llvm::Type::getInt8PtrTy(c);
    auto* row_type = llvm::StructType::get(c, {byte_pointer, i64});
    std::vector<llvm::Constant*> rows;
    for (size_t i = 0; i < kernels.size(); ++i) {
        llvm::Function* entry = nullptr;
        if (per_work_item[i]) {
            if (ze_result_t r = add_work_item_entry(module, kernels[i], i, barrier, &entry, log);
                r != ZE_RESULT_SUCCESS) {
                return r;
            }
        } else {
            entry = add_group_entry(module, kernels[i], i);
        }
        rows.push_back(llvm::ConstantStruct::get(row_type, {llvm::ConstantExpr::getBitCast(entry, byte_pointer),
                                                            llvm::ConstantInt::get(i64, per_work_item[i])}));
    }
    llvm::Function* resume = add_resume_function(module);
    auto* rows_type = llvm::ArrayType::get(row_type, rows.size());
    auto* table_type = llvm::StructType::get(c, {i64, i64, byte_pointer, rows_type});
    auto* table = llvm::ConstantStruct::get(
        table_type, {llvm::ConstantInt::get(i64, local_bytes), llvm::ConstantInt::get(i64, kernels.size()),
                     llvm::ConstantExpr::getBitCast(resume, byte_pointer), llvm::ConstantArray::get(rows_type, rows)});
    new llvm::GlobalVariable(module, table_type, true, llvm::GlobalValue::ExternalLinkage, table, kModuleTableSymbol);
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
