// SPIR-V bytes to LLVM IR through the SPIRV-LLVM-Translator, after a structural check of
// the binary that keeps malformed input away from the translator.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "zehal/ze_result.h"

namespace zehal::compiler {

// The most ids a module may declare (its header's bound): the translator sizes tables by it.
inline constexpr uint32_t kMaxSpirvIdBound = 1u << 22;

// Checks the header and the instruction stream of `spirv` (little-endian words, a known
// version, a bound within kMaxSpirvIdBound, every instruction inside the binary, only
// capabilities the targets here compile).
// MODULE_BUILD_FAILURE with the reason in `log` otherwise.
ze_result_t check_spirv(std::span<const uint8_t> spirv, std::string* log);

// A translated module with the context that owns it (the module goes first).
struct TranslatedModule {
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;
};

// Translates `spirv` (checked by check_spirv) into verified LLVM bitcode with OpenCL 1.2
// builtins (barrier(), atomic_add(), get_global_id()... as the translator names them).
// The translator runs in the helper process zehal-spirv-reader ($ZEHAL_SPIRV_READER,
// else beside the zehal library, else in the build tree): it ends its process on input
// it rejects, which here is a MODULE_BUILD_FAILURE with its message in `log`.
ze_result_t translate_spirv(std::span<const uint8_t> spirv, std::string* bitcode, std::string* log);

// The module of `bitcode` (from translate_spirv) in a context of its own.
ze_result_t parse_bitcode(std::string_view bitcode, TranslatedModule* out, std::string* log);

}  // namespace zehal::compiler
