// HostModule::build: the program lowered for the host, optimised (O2) and compiled to an
// object file (cached by program digest and host CPU), then loaded by an ORC LLJIT whose
// only outside symbols are the runtime's frame allocator and the C library's math. Each load has
// its program-scope variables of its own.
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "group_runner.hpp"
#include "host_jit.hpp"
#include "host_lowering.hpp"
#include "llvm_setup.hpp"
#include "module_cache.hpp"
#include "program_impl.hpp"

namespace zehal::compiler {

namespace {

// Bumped when the lowering changes what an object file holds.
constexpr std::string_view kHostFormat = "host-v6";

// The work-item coroutines split (work_item_coroutine.hpp) after a first cleanup of the
// lowered code: allocas to values, common loads merged, blocks simplified.
constexpr std::string_view kSplitCoroutines =
    "function(sroa,early-cse,simplifycfg),coro-early,cgscc(coro-split),coro-cleanup";

class HostModuleImpl final : public HostModule {
public:
    HostModuleImpl(std::shared_ptr<const Program> program, std::unique_ptr<llvm::orc::LLJIT> jit,
                   std::vector<HostKernel> kernels, std::vector<void*> globals,
                   std::map<std::string, void*, std::less<>> functions, uint64_t local_bytes)
        : program_(std::move(program)),
          jit_(std::move(jit)),
          kernels_(std::move(kernels)),
          globals_(std::move(globals)),
          functions_(std::move(functions)),
          local_bytes_(local_bytes) {}

    ze_result_t run(uint32_t index, const LaunchArgs& args, const LaunchGrid& grid, std::string* error) const override {
        if (index >= kernels_.size()) {
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        return run_groups(kernels_[index], local_bytes_, args, grid, error);
    }

    void* global_address(size_t index) const override { return index < globals_.size() ? globals_[index] : nullptr; }

    void* function_address(std::string_view name) const override {
        auto it = functions_.find(name);
        return it == functions_.end() ? nullptr : it->second;
    }

private:
    std::shared_ptr<const Program> program_;
    std::unique_ptr<llvm::orc::LLJIT> jit_;  // owns the code the kernels' entries point into
    std::vector<HostKernel> kernels_;
    std::vector<void*> globals_;                           // program()->globals() in this JIT's memory
    std::map<std::string, void*, std::less<>> functions_;  // the code's table of callable functions
    uint64_t local_bytes_;
};

// What a JIT's session reports beside the errors its calls return (the symbols a lookup
// found nowhere, which the lookup's own error leaves out), for the build log.
struct SessionReports {
    std::mutex mutex;  // the session may report from the thread that materialises code
    std::string text;
};

ze_result_t fail(std::string* log, const std::string& why) {
    *log = why;
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
}

// The host's target machine (this CPU and its features, aggressive optimisation).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> host_machine(llvm::orc::JITTargetMachineBuilder* builder) {
    auto detected = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!detected) {
        return detected.takeError();
    }
    detected->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
    detected->setRelocationModel(llvm::Reloc::PIC_);
    *builder = *detected;
    return detected->createTargetMachine();
}

}  // namespace

ze_result_t compile_host_object(llvm::Module& module, llvm::TargetMachine& machine, std::string* object,
                                std::string* log) {
    if (ze_result_t r = lower_for_host(module, machine.createDataLayout(), machine.getTargetTriple().str(), log);
        r != ZE_RESULT_SUCCESS) {
        return r;
    }
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (llvm::verifyModule(module, &stream)) {
        return fail(log, "the host lowering produced invalid IR: " + stream.str());
    }
    // The coroutines are split before O2 (whose own coroutine passes then have nothing to
    // do): split inside O2, after its simplification, their frames would carry values the
    // optimiser sank past a barrier (every product of a sum instead of the sum).
    if (!run_passes(module, machine, kSplitCoroutines)) {
        return fail(log, "the coroutine pipeline does not parse");
    }
    optimize_o2(module, machine);
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream out(buffer);
    llvm::legacy::PassManager passes;
    if (machine.addPassesToEmitFile(passes, out, nullptr, llvm::CGFT_ObjectFile)) {
        return fail(log, "the host target cannot emit object files");
    }
    passes.run(module);
    object->assign(buffer.begin(), buffer.end());
    count_compilation();
    return ZE_RESULT_SUCCESS;
}

namespace {

// Lowers, optimises and compiles `program` into an object file.
ze_result_t compile_object(const ProgramImpl& program, llvm::TargetMachine& machine, std::string* object,
                           std::string* log) {
    TranslatedModule translated;
    if (ze_result_t r = program.translate(&translated, log); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    return compile_host_object(*translated.module, machine, object, log);
}

// An LLJIT holding `object`, its outside symbols `symbols`, the runtime's and this
// process's; what its session reports goes to `reports`.
llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> load_object(llvm::orc::JITTargetMachineBuilder builder,
                                                              const std::string& object,
                                                              std::span<const HostSymbol> symbols,
                                                              std::shared_ptr<SessionReports> reports) {
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(builder)).create();
    if (!jit) {
        return jit.takeError();
    }
    (*jit)->getExecutionSession().setErrorReporter([reports](llvm::Error error) {
        const std::string message = llvm::toString(std::move(error));
        std::lock_guard<std::mutex> lock(reports->mutex);
        reports->text += (reports->text.empty() ? "" : "; ") + message;
    });
    llvm::orc::JITDylib& main = (*jit)->getMainJITDylib();
    llvm::orc::SymbolMap runtime;
    runtime[(*jit)->mangleAndIntern(kFrameSymbol)] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(&zehal_work_item_frame), llvm::JITSymbolFlags::Exported);
    for (const HostSymbol& symbol : symbols) {
        runtime[(*jit)->mangleAndIntern(symbol.name)] = llvm::JITEvaluatedSymbol(
            llvm::pointerToJITTargetAddress(symbol.address), llvm::JITSymbolFlags::Exported);
    }
    if (auto error = main.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
        return error;
    }
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        (*jit)->getDataLayout().getGlobalPrefix());
    if (!process) {
        return process.takeError();
    }
    main.addGenerator(std::move(*process));
    if (auto error = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "zehal-kernels"))) {
        return error;
    }
    return std::move(*jit);
}

}  // namespace

ze_result_t host_target(HostTarget* out, std::string* log) {
    initialize_llvm_targets();
    auto machine = host_machine(&out->builder);
    if (!machine) {
        return fail(log, "no host target: " + llvm::toString(machine.takeError()));
    }
    out->machine = std::move(*machine);
    return ZE_RESULT_SUCCESS;
}

ze_result_t load_host_module(const std::shared_ptr<const Program>& program, llvm::orc::JITTargetMachineBuilder builder,
                             const std::string& object, std::span<const HostSymbol> symbols,
                             std::shared_ptr<const HostModule>* out, std::string* log) {
    auto reports = std::make_shared<SessionReports>();
    auto jit = load_object(std::move(builder), object, symbols, reports);
    if (!jit) {
        return fail(log, "cannot load the host code: " + llvm::toString(jit.takeError()));
    }
    auto table = (*jit)->lookup(kModuleTableSymbol);
    if (!table) {
        std::string why = "cannot link the host code: " + llvm::toString(table.takeError());
        std::lock_guard<std::mutex> lock(reports->mutex);
        return fail(log, reports->text.empty() ? why : why + " (" + reports->text + ")");
    }
    const auto* header = table->toPtr<const ModuleTableHeader*>();
    const uint64_t local_bytes = header->local_bytes;
    if (header->kernel_count != program->kernels().size()) {
        return fail(log, "the host code does not match its program");
    }
    const auto* rows = reinterpret_cast<const ModuleTableKernel*>(header + 1);
    std::vector<HostKernel> kernels;
    for (size_t i = 0; i < program->kernels().size(); ++i) {
        HostKernel kernel;
        kernel.per_work_item = rows[i].per_work_item != 0;
        if (kernel.per_work_item) {
            kernel.start = reinterpret_cast<WorkItemStart>(rows[i].entry);
            kernel.resume = header->resume;
        } else {
            kernel.entry = reinterpret_cast<GroupEntry>(rows[i].entry);
        }
        kernel.args = program->kernels()[i].args;
        kernels.push_back(std::move(kernel));
    }
    std::vector<void*> globals;
    for (const GlobalInfo& g : program->globals()) {
        auto symbol = (*jit)->lookup(g.name);
        if (!symbol) {
            return fail(log, "cannot find the program-scope variable '" + g.name +
                                 "' in the host code: " + llvm::toString(symbol.takeError()));
        }
        globals.push_back(symbol->toPtr<void*>());
    }
    auto function_table = (*jit)->lookup(kFunctionTableSymbol);
    if (!function_table) {
        return fail(log,
                    "cannot find the function table in the host code: " + llvm::toString(function_table.takeError()));
    }
    std::map<std::string, void*, std::less<>> functions;
    const auto* count = function_table->toPtr<const uint64_t*>();
    const auto* function_rows = reinterpret_cast<const ModuleTableFunction*>(count + 1);
    for (uint64_t i = 0; i < *count; ++i) {
        functions.emplace(function_rows[i].name, function_rows[i].address);
    }
    *out = std::make_shared<HostModuleImpl>(program, std::move(*jit), std::move(kernels), std::move(globals),
                                            std::move(functions), local_bytes);
    return ZE_RESULT_SUCCESS;
}

ze_result_t HostModule::build(const std::shared_ptr<const Program>& program, std::shared_ptr<const HostModule>* out,
                              std::string* log) {
    std::string ignored;
    std::string* message = log != nullptr ? log : &ignored;
    message->clear();
    if (out == nullptr || !program) {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    out->reset();
    // Every Program is a ProgramImpl: this layer makes them all.
    const auto* impl = static_cast<const ProgramImpl*>(program.get());
    HostTarget target;
    if (ze_result_t r = host_target(&target, message); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    const llvm::TargetMachine& machine = *target.machine;
    const std::string name = std::string(kHostFormat) + "-" + machine.getTargetTriple().str() + "-" +
                             machine.getTargetCPU().str() + "-" + machine.getTargetFeatureString().str();
    const CacheKey key = cache_key(program->digest(), name);
    std::shared_ptr<const std::string> object = cache_find("host", key);
    if (!object) {
        std::string compiled;
        if (ze_result_t r = compile_object(*impl, *target.machine, &compiled, message); r != ZE_RESULT_SUCCESS) {
            return r;
        }
        cache_store("host", key, compiled);
        object = cache_find("host", key);
    }
    return load_host_module(program, std::move(target.builder), *object, {}, out, message);
}

}  // namespace zehal::compiler
