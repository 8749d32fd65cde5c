// The address-space rewrite of a translated module for NVPTX: a type remapper, the
// module's globals and functions made again with remapped types (LLVM's ValueMapper and
// CloneFunctionInto), then the old ones erased; and the builtins whose names or bodies
// depend on address spaces.
#include "nvptx_address_spaces.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <utility>
#include <vector>

#include "kernel_signature.hpp"

namespace zehal::compiler {

namespace {

// SPIR's private and generic spaces (kernel_signature.hpp has the others).
constexpr unsigned kSpirPrivate = 0;
constexpr unsigned kSpirGeneric = 4;
// NVPTX's.
constexpr unsigned kNvptxGeneric = 0;
constexpr unsigned kNvptxGlobal = 1;
constexpr unsigned kNvptxShared = 3;

// Every type with its pointers in NVPTX's spaces (memoised: a type maps to one type).
class NvptxTypes final : public llvm::ValueMapTypeRemapper {
public:
    llvm::Type* remapType(llvm::Type* type) override {
        if (auto found = mapped_.find(type); found != mapped_.end()) {
            return found->second;
        }
        llvm::Type* result = remap_new(type);
        mapped_[type] = result;
        return result;
    }

private:
    llvm::Type* remap_new(llvm::Type* type) {
        llvm::LLVMContext& c = type->getContext();
        if (auto* pointer = llvm::dyn_cast<llvm::PointerType>(type)) {
            return llvm::PointerType::get(c, nvptx_address_space(pointer->getAddressSpace()));
        }
        if (auto* array = llvm::dyn_cast<llvm::ArrayType>(type)) {
            return llvm::ArrayType::get(remapType(array->getElementType()), array->getNumElements());
        }
        if (auto* vector = llvm::dyn_cast<llvm::VectorType>(type)) {
            return llvm::VectorType::get(remapType(vector->getElementType()), vector->getElementCount());
        }
        if (auto* function = llvm::dyn_cast<llvm::FunctionType>(type)) {
            std::vector<llvm::Type*> params;
            for (llvm::Type* param : function->params()) {
                params.push_back(remapType(param));
            }
            return llvm::FunctionType::get(remapType(function->getReturnType()), params, function->isVarArg());
        }
        auto* structure = llvm::dyn_cast<llvm::StructType>(type);
        if (structure == nullptr || structure->isOpaque()) {
            return type;
        }
        std::vector<llvm::Type*> elements;
        bool same = true;
        for (llvm::Type* element : structure->elements()) {
            elements.push_back(remapType(element));
            same = same && elements.back() == element;
        }
        if (same) {
            return type;
        }
        return structure->isLiteral()
                   ? llvm::StructType::get(c, elements, structure->isPacked())
                   : llvm::StructType::create(c, elements, structure->getName(), structure->isPacked());
    }

    llvm::DenseMap<llvm::Type*, llvm::Type*> mapped_;
};

// Whether a cast from `from` to `to` (pointers or vectors of them) joins two SPIR spaces
// that NVPTX makes one: such a cast is its operand once remapped.
bool collapses(llvm::Type* from, llvm::Type* to) {
    return nvptx_address_space(from->getPointerAddressSpace()) == nvptx_address_space(to->getPointerAddressSpace());
}

// The remapped form of a constant addrspacecast that collapses: its remapped operand
// (ValueMapper would otherwise make an addrspacecast within one space, which is invalid).
class CollapsedCasts final : public llvm::ValueMaterializer {
public:
    CollapsedCasts(llvm::ValueToValueMapTy& map, NvptxTypes& types) : map_(map), types_(types) {}

    llvm::Value* materialize(llvm::Value* value) override {
        auto* cast = llvm::dyn_cast<llvm::ConstantExpr>(value);
        if (cast == nullptr || cast->getOpcode() != llvm::Instruction::AddrSpaceCast ||
            !collapses(cast->getOperand(0)->getType(), cast->getType())) {
            return nullptr;
        }
        return llvm::MapValue(cast->getOperand(0), map_, llvm::RF_None, &types_, this);
    }

private:
    llvm::ValueToValueMapTy& map_;
    NvptxTypes& types_;
};

// `attributes` with the types of their type attributes (byval, sret, byref...) remapped.
llvm::AttributeList remap_attribute_types(llvm::LLVMContext& c, llvm::AttributeList attributes, unsigned params,
                                          NvptxTypes& types) {
    for (unsigned i = 0; i < params; ++i) {
        for (int kind = llvm::Attribute::FirstTypeAttr; kind <= llvm::Attribute::LastTypeAttr; ++kind) {
            const auto attribute_kind = static_cast<llvm::Attribute::AttrKind>(kind);
            if (llvm::Type* type = attributes.getParamAttrs(i).getAttribute(attribute_kind).getValueAsType()) {
                attributes = attributes.replaceAttributeTypeAtIndex(c, llvm::AttributeList::FirstArgIndex + i,
                                                                    attribute_kind, types.remapType(type));
            }
        }
    }
    return attributes;
}

// One module's rewrite: the new globals and functions beside the old, bodies and
// initializers mapped over, then the old ones erased.
class SpaceRewrite {
public:
    explicit SpaceRewrite(llvm::Module& module) : module_(module), casts_(map_, types_) {}

    // The rewrite; false, with the name in `left`, when an old global or function is still
    // used after every reference the rewrite knows was mapped (it then stays in the module).
    bool run(std::string* left) {
        declare_globals();
        declare_functions();
        map_bodies();
        map_named_metadata();
        const bool erased = erase_old(left);
        remove_collapsed_casts();
        return erased;
    }

private:
    // Each global again, with its remapped type and space, in its place and under its name.
    void declare_globals() {
        std::vector<llvm::GlobalVariable*> old;
        for (llvm::GlobalVariable& global : module_.globals()) {
            old.push_back(&global);
        }
        for (llvm::GlobalVariable* global : old) {
            auto* now = new llvm::GlobalVariable(
                module_, types_.remapType(global->getValueType()), global->isConstant(), global->getLinkage(), nullptr,
                "", global, global->getThreadLocalMode(), nvptx_address_space(global->getAddressSpace()),
                global->isExternallyInitialized());
            now->copyAttributesFrom(global);
            now->takeName(global);
            map_[global] = now;
            globals_.emplace_back(global, now);
        }
    }

    // Each function again with its remapped type: every definition (its body may use
    // remapped values), and the declarations whose type changes; other declarations stay.
    void declare_functions() {
        std::vector<llvm::Function*> old;
        for (llvm::Function& function : module_) {
            old.push_back(&function);
        }
        for (llvm::Function* function : old) {
            auto* type = llvm::cast<llvm::FunctionType>(types_.remapType(function->getFunctionType()));
            llvm::Function* now = function;
            if (type != function->getFunctionType() && function->isIntrinsic()) {
                now = declare_intrinsic(function);
            } else if (type != function->getFunctionType() || !function->isDeclaration()) {
                now = llvm::Function::Create(type, function->getLinkage(), function->getAddressSpace(), "", &module_);
                now->copyAttributesFrom(function);
                now->setAttributes(
                    remap_attribute_types(module_.getContext(), now->getAttributes(), type->getNumParams(), types_));
                now->takeName(function);
            }
            map_[function] = now;
            if (now != function) {
                functions_.emplace_back(function, now);
            }
        }
    }

    // The intrinsic `old` declared for its remapped overloaded types (llvm.memcpy.p4.p1.i64
    // becomes llvm.memcpy.p0.p1.i64).
    llvm::Function* declare_intrinsic(llvm::Function* old) {
        llvm::SmallVector<llvm::Type*, 4> overloads;
        // Always true: the module is verified, so its intrinsics match their signatures.
        llvm::Intrinsic::getIntrinsicSignature(old, overloads);
        for (llvm::Type*& type : overloads) {
            type = types_.remapType(type);
        }
        return llvm::Intrinsic::getDeclaration(&module_, old->getIntrinsicID(), overloads);
    }

    // Initializers, global metadata and function bodies mapped onto the new values.
    void map_bodies() {
        for (auto [old, now] : globals_) {
            if (old->hasInitializer()) {
                now->setInitializer(llvm::cast<llvm::Constant>(
                    llvm::MapValue(old->getInitializer(), map_, llvm::RF_None, &types_, &casts_)));
            }
            llvm::SmallVector<std::pair<unsigned, llvm::MDNode*>, 4> metadata;
            old->getAllMetadata(metadata);
            for (auto [kind, node] : metadata) {
                now->addMetadata(
                    kind, *llvm::cast<llvm::MDNode>(llvm::MapMetadata(node, map_, llvm::RF_None, &types_, &casts_)));
            }
        }
        for (auto [old, now] : functions_) {
            if (old->isDeclaration()) {
                continue;
            }
            for (unsigned i = 0; i < old->arg_size(); ++i) {
                now->getArg(i)->setName(old->getArg(i)->getName());
                map_[old->getArg(i)] = now->getArg(i);
            }
            llvm::SmallVector<llvm::ReturnInst*, 4> returns;
            llvm::CloneFunctionInto(now, old, map_, llvm::CloneFunctionChangeType::GlobalChanges, returns, "", nullptr,
                                    &types_, &casts_);
            // CloneFunctionInto copies the old attributes, with the old types.
            now->setAttributes(
                remap_attribute_types(module_.getContext(), now->getAttributes(), now->arg_size(), types_));
        }
    }

    // Module-level metadata that names globals or functions names the new ones.
    void map_named_metadata() {
        for (llvm::NamedMDNode& named : module_.named_metadata()) {
            for (unsigned i = 0; i < named.getNumOperands(); ++i) {
                named.setOperand(i, llvm::cast<llvm::MDNode>(
                                        llvm::MapMetadata(named.getOperand(i), map_, llvm::RF_None, &types_, &casts_)));
            }
        }
    }

    // The old globals and functions hold references to each other: all are dropped
    // before any is erased. One still used elsewhere stays, named in `left`.
    bool erase_old(std::string* left) {
        std::vector<llvm::GlobalValue*> old_values;
        for (auto [old, now] : functions_) {
            old->replaceAllUsesWith(now);  // both are pointers of the program's space
            old->dropAllReferences();
            old_values.push_back(old);
        }
        for (auto [old, now] : globals_) {
            old->dropAllReferences();
            old_values.push_back(old);
        }
        bool erased = true;
        for (llvm::GlobalValue* old : old_values) {
            old->removeDeadConstantUsers();
            if (old->use_empty()) {
                old->eraseFromParent();
            } else if (erased) {
                erased = false;
                *left = old->getName().str();
            }
        }
        return erased;
    }

    // Casts between private and generic pointers, now within one space.
    void remove_collapsed_casts() {
        for (llvm::Function& function : module_) {
            for (llvm::Instruction& inst : llvm::make_early_inc_range(llvm::instructions(function))) {
                auto* cast = llvm::dyn_cast<llvm::AddrSpaceCastInst>(&inst);
                if (cast != nullptr && cast->getSrcTy() == cast->getDestTy()) {
                    cast->replaceAllUsesWith(cast->getPointerOperand());
                    cast->eraseFromParent();
                }
            }
        }
    }

    llvm::Module& module_;
    llvm::ValueToValueMapTy map_;
    NvptxTypes types_;
    CollapsedCasts casts_;
    std::vector<std::pair<llvm::GlobalVariable*, llvm::GlobalVariable*>> globals_;
    std::vector<std::pair<llvm::Function*, llvm::Function*>> functions_;
};

// Replaces every `from` in `name` by `to`.
void replace_all(std::string& name, std::string_view from, std::string_view to) {
    for (size_t at = name.find(from); at != std::string::npos; at = name.find(from, at + to.size())) {
        name.replace(at, from.size(), to);
    }
}

}  // namespace

unsigned nvptx_address_space(unsigned spir_space) {
    switch (spir_space) {
        case kSpirPrivate:
        case kSpirGeneric:
            return kNvptxGeneric;
        case kGlobalSpace:
        case kConstantSpace:
            return kNvptxGlobal;
        case kLocalSpace:
            return kNvptxShared;
        default:
            return spir_space;
    }
}

ze_result_t remap_to_nvptx_address_spaces(llvm::Module& module, std::string* log) {
    if (module.getContext().supportsTypedPointers()) {
        *log = "the NVPTX lowering needs a module with opaque pointers";
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    if (!module.alias_empty() || !module.ifunc_empty()) {
        *log = "global aliases are not supported on NVPTX";
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    llvm::StripDebugInfo(module);
    std::string left;
    if (!SpaceRewrite(module).run(&left)) {
        *log = "the NVPTX address-space rewrite left uses of " + left;
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    return ZE_RESULT_SUCCESS;
}

bool define_generic_cast(llvm::Function& builtin) {
    llvm::Intrinsic::ID test = llvm::Intrinsic::not_intrinsic;
    if (builtin.getName() == "__to_global") {
        test = llvm::Intrinsic::nvvm_isspacep_global;
    } else if (builtin.getName() == "__to_local") {
        test = llvm::Intrinsic::nvvm_isspacep_shared;
    } else if (builtin.getName() == "__to_private") {
        test = llvm::Intrinsic::nvvm_isspacep_local;
    }
    auto* result = llvm::dyn_cast<llvm::PointerType>(builtin.getReturnType());
    if (test == llvm::Intrinsic::not_intrinsic || result == nullptr || builtin.arg_size() != 1 ||
        !builtin.getArg(0)->getType()->isPointerTy() ||
        builtin.getArg(0)->getType()->getPointerAddressSpace() != kNvptxGeneric) {
        return false;
    }
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(builtin.getContext(), "entry", &builtin));
    llvm::Value* pointer = builtin.getArg(0);
    llvm::Value* inside = b.CreateCall(llvm::Intrinsic::getDeclaration(builtin.getParent(), test), {pointer});
    llvm::Value* cast = result->getAddressSpace() == kNvptxGeneric ? pointer : b.CreateAddrSpaceCast(pointer, result);
    b.CreateRet(b.CreateSelect(inside, cast, llvm::ConstantPointerNull::get(result)));
    return true;
}

void rename_builtins_for_libclc(llvm::Module& module) {
    for (llvm::Function& function : llvm::make_early_inc_range(module)) {
        if (!function.isDeclaration() || function.isIntrinsic() || !function.getName().startswith("_Z")) {
            continue;
        }
        std::string name = function.getName().str();
        replace_all(name, "U3AS4", "");
        replace_all(name, "U3AS2", "U3AS1");
        if (name == function.getName()) {
            continue;
        }
        if (llvm::Function* existing = module.getFunction(name)) {
            function.replaceAllUsesWith(existing);  // one builtin, declared for two SPIR spaces
            function.eraseFromParent();
        } else {
            function.setName(name);
        }
    }
}

}  // namespace zehal::compiler
