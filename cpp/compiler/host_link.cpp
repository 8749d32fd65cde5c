// HostModule::link: a program's imports resolved by linking the LLVM IR of the functions it
// imports into it, and its imported variables bound to their modules' storage.
//
// Functions are copied, not called across JITs: the host lowering threads the work-item
// context through every function of one module and sees whether a kernel reaches a
// barrier, so an imported function built into the importer runs with the caller's
// work-item functions and barriers. Variables are not copied: each one of a source, imported
// or used by code taken from it, becomes a declaration named kLinkedPrefix<source>.<name>,
// which the JIT binds to the source's own storage.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "host_jit.hpp"
#include "kernel_signature.hpp"
#include "program_impl.hpp"

namespace zehal::compiler {

namespace {

// Names of the declarations that stand for a source's variables.
constexpr std::string_view kLinkedPrefix = "zehal.linked.";  // exported: bound to the source's storage
constexpr std::string_view kStaticPrefix = "zehal.static.";  // static and writable: cannot be bound

std::string linked_name(size_t source, std::string_view name) {
    return std::string(kLinkedPrefix) + std::to_string(source) + "." + std::string(name);
}

ze_result_t fail(std::string* log, std::string why) {
    *log = std::move(why);
    return ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
}

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
}

// Replaces `global` by a declaration of the same type named `name`.
void declare_instead(llvm::GlobalVariable* global, const std::string& name) {
    auto* declaration = new llvm::GlobalVariable(*global->getParent(), global->getValueType(), global->isConstant(),
                                                 llvm::GlobalValue::ExternalLinkage, nullptr, name, nullptr,
                                                 global->getThreadLocalMode(), global->getAddressSpace());
    declaration->setAlignment(global->getAlign());
    global->replaceAllUsesWith(declaration);
    global->eraseFromParent();
}

// Gives the declaration `variable` the name `bound`, or its uses to the declaration of
// that name when the module has one.
void bind_variable(llvm::GlobalVariable* variable, const std::string& bound) {
    if (llvm::GlobalVariable* existing = variable->getParent()->getGlobalVariable(bound)) {
        variable->replaceAllUsesWith(existing);
        variable->eraseFromParent();
        return;
    }
    variable->setName(bound);
}

// Makes `module` (source `index`'s program) ready to link the functions `taken` from it:
// every other function internal (renamed by the linker where it clashes, linked only where
// used), kernels plain functions (a kernel the importer calls is a function of its own code,
// not one of its kernels), variables declarations (bound to the source's storage, or marked
// static when the source does not export them and they are writable; static constants,
// string literals among them, are copied).
void prepare_source(llvm::Module& module, size_t index, const std::set<std::string>& taken) {
    for (llvm::Function& f : module) {
        if (f.isDeclaration()) continue;
        if (f.getCallingConv() == llvm::CallingConv::SPIR_KERNEL) f.setCallingConv(llvm::CallingConv::SPIR_FUNC);
        if (!taken.count(f.getName().str())) f.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    for (llvm::Function& f : module)
        for (llvm::BasicBlock& block : f)
            for (llvm::Instruction& inst : block)
                if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst);
                    call && call->getCallingConv() == llvm::CallingConv::SPIR_KERNEL)
                    call->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    std::vector<llvm::GlobalVariable*> variables;
    for (llvm::GlobalVariable& g : module.globals())
        if (!g.isDeclaration() && g.getAddressSpace() != kLocalSpace && !g.getName().startswith("llvm."))
            variables.push_back(&g);
    for (llvm::GlobalVariable* g : variables) {
        const std::string name = g->getName().str();
        if (!g->hasLocalLinkage())
            declare_instead(g, linked_name(index, name));
        else if (!g->isConstant())
            declare_instead(g, std::string(kStaticPrefix) + name);
    }
}

// The state of one link: the importer's module, which receives the code, and what it
// resolved.
class Linking {
public:
    Linking(llvm::Module& module, std::span<const LinkSource> sources) : module_(module), sources_(sources) {}

    // Resolves `names` and every import the code taken for them brings, source by source.
    ze_result_t resolve(std::vector<std::string> names, std::string* log);
    // The symbols the code needs (the sources' variables), and the sources holding them into
    // `holders`; NOT_READY when such a source has no host code yet.
    ze_result_t symbols(std::vector<HostSymbol>* out, std::set<size_t>* holders, std::string* log) const;

private:
    // The one source exporting `name`, else records it as missing or ambiguous.
    std::optional<size_t> exporter_of(const std::string& name);
    // Links the functions `taken` of source `index` into the module.
    ze_result_t take(size_t index, const std::set<std::string>& taken, std::string* log);
    // Imports of the linked sources that the module now declares and uses.
    std::vector<std::string> open_imports() const;

    llvm::Module& module_;
    std::span<const LinkSource> sources_;
    std::map<std::string, std::optional<size_t>> resolved_;  // name -> its source (none: missing, ambiguous)
    std::vector<std::string> missing_;
    std::vector<std::string> ambiguous_;
    std::set<size_t> linked_;  // the sources whose code was linked in
};

std::optional<size_t> Linking::exporter_of(const std::string& name) {
    std::vector<size_t> found;
    for (size_t i = 0; i < sources_.size(); ++i) {
        const std::vector<std::string>& exports = sources_[i].program->exports();
        if (std::find(exports.begin(), exports.end(), name) != exports.end()) found.push_back(i);
    }
    if (found.size() == 1) return found[0];
    (found.empty() ? missing_ : ambiguous_).push_back(name);
    return std::nullopt;
}

ze_result_t Linking::take(size_t index, const std::set<std::string>& taken, std::string* log) {
    const auto& program = static_cast<const ProgramImpl&>(*sources_[index].program);
    auto buffer = llvm::MemoryBuffer::getMemBuffer(program.bitcode(), "spirv", false);
    auto source = llvm::parseBitcodeFile(buffer->getMemBufferRef(), module_.getContext());
    if (!source) return fail(log, "cannot read an exporting module: " + llvm::toString(source.takeError()));
    prepare_source(**source, index, taken);
    if (llvm::Linker::linkModules(module_, std::move(*source), llvm::Linker::Flags::LinkOnlyNeeded))
        return fail(log, "the LLVM linker refused the modules");
    linked_.insert(index);
    return ZE_RESULT_SUCCESS;
}

std::vector<std::string> Linking::open_imports() const {
    std::vector<std::string> open;
    for (size_t index : linked_) {
        for (const std::string& name : sources_[index].program->imports()) {
            const llvm::GlobalValue* value = module_.getNamedValue(name);
            if (!value || !value->isDeclaration() || value->use_empty()) continue;
            // A variable resolved before still needs binding here (another source declared it).
            const auto it = resolved_.find(name);
            if (it == resolved_.end() || (it->second && llvm::isa<llvm::GlobalVariable>(value))) open.push_back(name);
        }
    }
    return open;
}

ze_result_t Linking::resolve(std::vector<std::string> names, std::string* log) {
    while (!names.empty()) {
        std::map<size_t, std::set<std::string>> taken;
        for (const std::string& name : names) {
            auto [it, fresh] = resolved_.try_emplace(name);
            if (fresh) it->second = exporter_of(name);
            const std::optional<size_t> source = it->second;
            if (!source) continue;
            // An imported variable is the source's: its declaration becomes the bound one.
            if (llvm::GlobalVariable* v = module_.getGlobalVariable(name); v && v->isDeclaration())
                bind_variable(v, linked_name(*source, name));
            else if (fresh)
                taken[*source].insert(name);
        }
        for (const auto& [index, functions] : taken)
            if (ze_result_t r = take(index, functions, log); r != ZE_RESULT_SUCCESS) return r;
        names = open_imports();
    }
    if (!missing_.empty() || !ambiguous_.empty()) {
        std::string why;
        if (!missing_.empty()) why = "unresolved imports (no module of the link exports them): " + joined(missing_);
        if (!ambiguous_.empty())
            why += (why.empty() ? "" : "; ") + std::string("imports exported by several modules of the link: ") +
                   joined(ambiguous_);
        return fail(log, why);
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t Linking::symbols(std::vector<HostSymbol>* out, std::set<size_t>* holders, std::string* log) const {
    for (const llvm::GlobalVariable& g : module_.globals()) {
        const llvm::StringRef name = g.getName();
        if (!g.isDeclaration() || g.use_empty()) continue;
        if (name.startswith(kStaticPrefix))
            return fail(log, "imported code uses '" + name.drop_front(kStaticPrefix.size()).str() +
                                 "', a static variable of its module, which only that module reaches");
        if (!name.startswith(kLinkedPrefix)) continue;
        const llvm::StringRef rest = name.drop_front(kLinkedPrefix.size());
        size_t index = 0;
        if (rest.take_until([](char c) { return c == '.'; }).getAsInteger(10, index) || index >= sources_.size())
            return fail(log, "a bound variable has a malformed name: " + name.str());
        const std::string variable = rest.drop_until([](char c) { return c == '.'; }).drop_front().str();
        const std::vector<GlobalInfo>& globals = sources_[index].program->globals();
        const auto it = std::find_if(globals.begin(), globals.end(),
                                     [&](const GlobalInfo& info) { return info.name == variable; });
        if (it == globals.end()) return fail(log, "'" + variable + "' is exported but is no program-scope variable");
        if (!sources_[index].host) return ZE_RESULT_NOT_READY;
        out->push_back(HostSymbol{name.str(), sources_[index].host->global_address(it - globals.begin())});
        holders->insert(index);
    }
    return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t HostModule::link(const std::shared_ptr<const Program>& program, std::span<const LinkSource> sources,
                             std::shared_ptr<const HostModule>* out, std::vector<size_t>* used, std::string* log) {
    std::string ignored;
    std::string* message = log != nullptr ? log : &ignored;
    message->clear();
    if (out == nullptr || used == nullptr || !program) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    out->reset();
    used->clear();
    for (const LinkSource& s : sources)
        if (!s.program) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    TranslatedModule translated;
    if (ze_result_t r = static_cast<const ProgramImpl&>(*program).translate(&translated, message);
        r != ZE_RESULT_SUCCESS)
        return r;
    Linking linking(*translated.module, sources);
    if (ze_result_t r = linking.resolve(program->imports(), message); r != ZE_RESULT_SUCCESS) return r;
    std::vector<HostSymbol> symbols;
    std::set<size_t> holders;
    if (ze_result_t r = linking.symbols(&symbols, &holders, message); r != ZE_RESULT_SUCCESS) return r;
    HostTarget target;
    if (ze_result_t r = host_target(&target, message); r != ZE_RESULT_SUCCESS) return r;
    std::string object;
    if (ze_result_t r = compile_host_object(*translated.module, *target.machine, &object, message);
        r != ZE_RESULT_SUCCESS)
        return r;
    if (ze_result_t r = load_host_module(program, std::move(target.builder), object, symbols, out, message);
        r != ZE_RESULT_SUCCESS)
        return r;
    used->assign(holders.begin(), holders.end());
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
