// printf calls rewritten as CUDA's vprintf with an argument buffer on the caller's stack.
#include "nvptx_printf.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <vector>

namespace zehal::compiler {

namespace {

// `value` as C passes a variadic argument and vprintf reads it: floating point as double,
// integers narrower than int as int, pointers as generic ones; null for a vector.
llvm::Value* promote(llvm::IRBuilder<>& b, llvm::Value* value) {
    llvm::Type* type = value->getType();
    if (type->isFloatingPointTy()) {
        return type->isDoubleTy() ? value : b.CreateFPExt(value, b.getDoubleTy());
    }
    if (type->isIntegerTy()) {
        return type->getIntegerBitWidth() < 32 ? b.CreateSExt(value, b.getInt32Ty()) : value;
    }
    if (type->isPointerTy()) {
        return type->getPointerAddressSpace() == 0 ? value : b.CreateAddrSpaceCast(value, b.getPtrTy());
    }
    return nullptr;
}

// Replaces one printf call with vprintf; false when an argument cannot be passed.
bool lower_call(llvm::CallInst* call, llvm::FunctionCallee vprintf) {
    llvm::IRBuilder<> b(call);
    std::vector<llvm::Value*> values;
    std::vector<llvm::Type*> fields;
    for (unsigned i = 1; i < call->arg_size(); ++i) {
        llvm::Value* value = promote(b, call->getArgOperand(i));
        if (value == nullptr) {
            return false;
        }
        values.push_back(value);
        fields.push_back(value->getType());
    }
    llvm::Value* buffer = llvm::ConstantPointerNull::get(b.getPtrTy());
    if (!values.empty()) {
        auto* layout = llvm::StructType::get(call->getContext(), fields);
        llvm::Function* caller = call->getFunction();
        llvm::IRBuilder<> entry(&*caller->getEntryBlock().getFirstInsertionPt());
        buffer = entry.CreateAlloca(layout, nullptr, "printf.arguments");
        for (unsigned i = 0; i < values.size(); ++i) {
            b.CreateStore(values[i], b.CreateStructGEP(layout, buffer, i));
        }
    }
    llvm::Value* format = promote(b, call->getArgOperand(0));
    llvm::CallInst* printed = b.CreateCall(vprintf, {format, buffer});
    call->replaceAllUsesWith(printed);
    call->eraseFromParent();
    return true;
}

}  // namespace

ze_result_t lower_printf(llvm::Module& module, std::string* log) {
    llvm::Function* printf = module.getFunction("printf");
    if (printf == nullptr || !printf->isDeclaration()) {
        return ZE_RESULT_SUCCESS;
    }
    llvm::LLVMContext& c = module.getContext();
    auto* pointer = llvm::PointerType::get(c, 0);
    llvm::FunctionCallee vprintf = module.getOrInsertFunction(
        kVprintf, llvm::FunctionType::get(llvm::Type::getInt32Ty(c), {pointer, pointer}, false));
    std::vector<llvm::CallInst*> calls;
    for (llvm::User* user : printf->users()) {
        auto* call = llvm::dyn_cast<llvm::CallInst>(user);
        if (call == nullptr || call->getCalledOperand() != printf || call->arg_size() == 0 ||
            !call->getArgOperand(0)->getType()->isPointerTy()) {
            *log = "printf is used other than by calls with a format";
            return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        }
        calls.push_back(call);
    }
    for (llvm::CallInst* call : calls) {
        if (!lower_call(call, vprintf)) {
            *log = "printf with vector arguments is not supported on CUDA";
            return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        }
    }
    printf->eraseFromParent();
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
