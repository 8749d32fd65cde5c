// LLVM target registration, once per process.
#include "llvm_setup.hpp"

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

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

namespace {

// The analyses of every pass, for `builder`'s target; `run` gets the module manager.
template <typename Run>
void with_analyses(llvm::PassBuilder& builder, const Run& run) {
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager modules;
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(cgscc);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, cgscc, modules);
    run(modules);
}

}  // namespace

void optimize_o2(llvm::Module& module, llvm::TargetMachine& machine) {
    llvm::PassBuilder builder(&machine);
    with_analyses(builder, [&](llvm::ModuleAnalysisManager& modules) {
        builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(module, modules);
    });
}

bool run_passes(llvm::Module& module, llvm::TargetMachine& machine, std::string_view passes) {
    llvm::PassBuilder builder(&machine);
    llvm::ModulePassManager pipeline;
    if (llvm::Error error = builder.parsePassPipeline(pipeline, llvm::StringRef(passes.data(), passes.size()))) {
        llvm::consumeError(std::move(error));
        return false;
    }
    with_analyses(builder, [&](llvm::ModuleAnalysisManager& modules) { pipeline.run(module, modules); });
    return true;
}

}  // namespace zehal::compiler
