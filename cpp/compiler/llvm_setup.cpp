// LLVM target registration, once per process.
#include "llvm_setup.hpp"

#include <llvm/Support/TargetSelect.h>

#include <mutex>

namespace zehal::compiler {

void initialize_llvm_targets() {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
    });
}

}  // namespace zehal::compiler
