// The steps of HostModule::build that HostModule::link shares (host_jit.cpp): the host's
// target, a translated module compiled into an object file, an object file loaded as a
// HostModule.
#pragma once

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <span>
#include <string>

#include "compiler/program.hpp"

namespace zehal::compiler {

// This CPU as a code generation target, and the builder a JIT for it starts from.
struct HostTarget {
    llvm::orc::JITTargetMachineBuilder builder{llvm::Triple()};
    std::unique_ptr<llvm::TargetMachine> machine;
};

// A symbol the object file of a HostModule refers to and does not define, and its address.
struct HostSymbol {
    std::string name;
    const void* address = nullptr;
};

// The host's target; MODULE_BUILD_FAILURE with `log` when LLVM has none for this CPU.
ze_result_t host_target(HostTarget* out, std::string* log);

// Lowers `module` (a translated program) for the host, optimises it (O2) and compiles it into
// the object file `object`; counts one compilation. MODULE_BUILD_FAILURE with `log`.
ze_result_t compile_host_object(llvm::Module& module, llvm::TargetMachine& machine, std::string* object,
                                std::string* log);

// The HostModule of `program` over `object` (compiled from it), loaded by a JIT made by
// `builder` in which `symbols` are defined beside the runtime's and this process's.
// MODULE_BUILD_FAILURE with `log` when it does not load or link.
ze_result_t load_host_module(const std::shared_ptr<const Program>& program, llvm::orc::JITTargetMachineBuilder builder,
                             const std::string& object, std::span<const HostSymbol> symbols,
                             std::shared_ptr<const HostModule>* out, std::string* log);

}  // namespace zehal::compiler
