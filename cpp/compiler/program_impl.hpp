// The Program of this layer: the bitcode the SPIR-V was translated into (each target
// reads it into a context of its own, so builds of one program run in parallel), its
// kernels and its digest.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/program.hpp"
#include "spirv_linkage.hpp"
#include "spirv_reader.hpp"

namespace zehal::compiler {

class ProgramImpl final : public Program {
public:
    ProgramImpl(std::shared_ptr<const std::string> bitcode, std::vector<KernelInfo> kernels,
                std::vector<GlobalInfo> globals, SpirvLinkage linkage, const std::array<uint8_t, 32>& digest)
        : bitcode_(std::move(bitcode)),
          kernels_(std::move(kernels)),
          globals_(std::move(globals)),
          linkage_(std::move(linkage)),
          digest_(digest) {}

    const std::vector<KernelInfo>& kernels() const override { return kernels_; }
    int find(std::string_view name) const override;
    const std::vector<GlobalInfo>& globals() const override { return globals_; }
    const std::vector<std::string>& imports() const override { return linkage_.imports; }
    const std::vector<std::string>& exports() const override { return linkage_.exports; }
    const std::array<uint8_t, 32>& digest() const override { return digest_; }

    // The program as a verified LLVM module in a context of its own (read again each call).
    ze_result_t translate(TranslatedModule* out, std::string* log) const;
    // The translated bitcode (what translate reads).
    const std::string& bitcode() const noexcept { return *bitcode_; }

private:
    std::shared_ptr<const std::string> bitcode_;
    std::vector<KernelInfo> kernels_;
    std::vector<GlobalInfo> globals_;
    SpirvLinkage linkage_;
    std::array<uint8_t, 32> digest_;
};

// Counts one compilation (a lowering and code generation, not a cache hit).
void count_compilation() noexcept;

}  // namespace zehal::compiler
