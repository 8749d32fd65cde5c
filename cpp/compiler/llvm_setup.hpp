// LLVM's process-wide setup for the targets zehal compiles for (the host, NVPTX): done
// once, on first use.
#pragma once

namespace zehal::compiler {

// Registers the native target and NVPTX with LLVM; safe to call from any thread.
void initialize_llvm_targets();

}  // namespace zehal::compiler
