// LLVM's process-wide setup for the targets zehal compiles for (the host, NVPTX): done
// once, on first use.
#pragma once

#include <string_view>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace zehal::compiler {

// Registers the native target and NVPTX with LLVM; safe to call from any thread.
void initialize_llvm_targets();

// Runs LLVM's default O2 module pipeline for `machine` over `module` (host and PTX alike).
void optimize_o2(llvm::Module& module, llvm::TargetMachine& machine);

// Runs the module pipeline `passes` (opt's -passes syntax) for `machine` over `module`;
// false when the text does not parse.
bool run_passes(llvm::Module& module, llvm::TargetMachine& machine, std::string_view passes);

}  // namespace zehal::compiler
