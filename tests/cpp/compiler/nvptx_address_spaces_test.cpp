// The address-space rewrite for NVPTX (cpp/compiler/nvptx_address_spaces.hpp) on LLVM IR:
// a translated test kernel and hand-written SPIR IR with what OpenCL C rarely makes
// (constant casts, intrinsics over several spaces, structs of pointers, byval types).
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Operator.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <set>

#include "nvptx_address_spaces.hpp"
#include "program_impl.hpp"
#include "spirv_files.hpp"

namespace zehal::compiler {
namespace {

// NVPTX's generic, global and shared spaces: the only ones a remapped module may hold.
const std::set<unsigned> kNvptxSpaces{0, 1, 3};

// Adds the address space of every pointer inside `type` to `spaces`.
void add_spaces(llvm::Type* type, std::set<unsigned>* spaces) {
    if (type->isPointerTy()) {
        spaces->insert(type->getPointerAddressSpace());
    }
    for (llvm::Type* inner : type->subtypes()) {
        add_spaces(inner, spaces);
    }
}

// The address spaces of every global, function, argument, instruction and operand.
std::set<unsigned> spaces_in(llvm::Module& module) {
    std::set<unsigned> spaces;
    for (llvm::GlobalVariable& global : module.globals()) {
        spaces.insert(global.getAddressSpace());
        add_spaces(global.getValueType(), &spaces);
    }
    for (llvm::Function& function : module) {
        add_spaces(function.getFunctionType(), &spaces);
        for (llvm::Instruction& inst : llvm::instructions(function)) {
            add_spaces(inst.getType(), &spaces);
            for (llvm::Value* operand : inst.operands()) {
                add_spaces(operand->getType(), &spaces);
            }
            if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
                add_spaces(alloca->getAllocatedType(), &spaces);
            }
            if (auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&inst)) {
                add_spaces(gep->getSourceElementType(), &spaces);
            }
        }
    }
    return spaces;
}

// Checks that no addrspacecast in `value` or its constant operands stays within one space.
void expect_no_cast_within_a_space(llvm::User* value) {
    if (auto* cast = llvm::dyn_cast<llvm::Operator>(value);
        cast != nullptr && cast->getOpcode() == llvm::Instruction::AddrSpaceCast) {
        EXPECT_NE(cast->getOperand(0)->getType()->getPointerAddressSpace(), cast->getType()->getPointerAddressSpace());
    }
    for (llvm::Value* operand : value->operands()) {
        if (auto* constant = llvm::dyn_cast<llvm::ConstantExpr>(operand)) {
            expect_no_cast_within_a_space(constant);
        } else if (auto* aggregate = llvm::dyn_cast<llvm::ConstantAggregate>(operand)) {
            expect_no_cast_within_a_space(aggregate);
        }
    }
}

// Remaps `module` and checks it: valid IR with only NVPTX's spaces, no cast within one space.
void remap_and_check(llvm::Module& module) {
    std::string log;
    ASSERT_EQ(remap_to_nvptx_address_spaces(module, &log), ZE_RESULT_SUCCESS) << log;
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    EXPECT_FALSE(llvm::verifyModule(module, &stream)) << stream.str();
    for (unsigned space : spaces_in(module)) {
        EXPECT_EQ(kNvptxSpaces.count(space), 1u) << "address space " << space << " is left";
    }
    for (llvm::Function& function : module) {
        for (llvm::Instruction& inst : llvm::instructions(function)) {
            expect_no_cast_within_a_space(&inst);
        }
    }
    for (llvm::GlobalVariable& global : module.globals()) {
        if (global.hasInitializer()) {
            expect_no_cast_within_a_space(global.getInitializer());
        }
    }
}

TEST(NvptxAddressSpaces, TranslatedKernelsKeepNoSpirSpace) {
    ZEHAL_REQUIRE_COMPILER();
    auto program = testing::load_program("address_spaces");
    ASSERT_TRUE(program);
    TranslatedModule translated;
    std::string log;
    // Every Program is a ProgramImpl: the compiler layer makes them all.
    ASSERT_EQ(static_cast<const ProgramImpl&>(*program).translate(&translated, &log), ZE_RESULT_SUCCESS) << log;
    llvm::Module& module = *translated.module;
    const std::set<unsigned> before = spaces_in(module);
    EXPECT_EQ(before.count(2), 1u) << "the test kernels have __constant pointers";
    EXPECT_EQ(before.count(4), 1u) << "the test kernels have generic pointers";
    remap_and_check(module);
    for (const KernelInfo& kernel : program->kernels()) {
        llvm::Function* function = module.getFunction(kernel.name);
        ASSERT_NE(function, nullptr) << kernel.name;
        EXPECT_EQ(function->getCallingConv(), llvm::CallingConv::SPIR_KERNEL) << kernel.name;
        EXPECT_NE(function->getMetadata("kernel_arg_addr_space"), nullptr) << kernel.name;
    }
    llvm::GlobalVariable* table = module.getGlobalVariable("kSquares");
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->getAddressSpace(), 1u);
    EXPECT_TRUE(table->isConstant());
    ASSERT_TRUE(table->hasInitializer());
    EXPECT_FALSE(table->getInitializer()->isNullValue());

    rename_builtins_for_libclc(module);
    std::set<std::string> declared;
    for (llvm::Function& function : module) {
        if (function.isDeclaration()) {
            declared.insert(function.getName().str());
            EXPECT_EQ(function.getName().find("U3AS4"), llvm::StringRef::npos) << function.getName().str();
            EXPECT_EQ(function.getName().find("U3AS2"), llvm::StringRef::npos) << function.getName().str();
        }
    }
    EXPECT_EQ(declared.count("_Z6vload2mPU3AS1Ki"), 1u) << "vload2 from __constant is libclc's global one";
    EXPECT_EQ(declared.count("_Z7vstore2Dv2_imPi"), 1u) << "vstore2 to generic is libclc's unqualified one";
}

// SPIR IR as the translator could write it, with the cases OpenCL C seldom produces.
constexpr const char* kSpirIr = R"(
target triple = "spir64-unknown-unknown"
%struct.Pair = type { ptr addrspace(4), ptr addrspace(2) }
@value = addrspace(1) global i32 7
@generic_of_value = addrspace(1) global ptr addrspace(4) addrspacecast (ptr addrspace(1) @value to ptr addrspace(4))
@table = addrspace(2) constant [2 x i32] [i32 1, i32 2]
@pair = addrspace(1) global %struct.Pair { ptr addrspace(4) null, ptr addrspace(2) @table }

declare void @llvm.memcpy.p4.p1.i64(ptr addrspace(4), ptr addrspace(1), i64, i1)
declare void @llvm.memcpy.p0.p1.i64(ptr, ptr addrspace(1), i64, i1)

define spir_func i32 @read_pair(ptr byval(%struct.Pair) %pair) {
  %field = getelementptr inbounds %struct.Pair, ptr %pair, i64 0, i32 1
  %constant = load ptr addrspace(2), ptr %field
  %v = load i32, ptr addrspace(2) %constant
  ret i32 %v
}

define spir_kernel void @kernel(ptr addrspace(1) %out, ptr addrspace(2) %in) {
  %private = alloca i32
  %generic = addrspacecast ptr %private to ptr addrspace(4)
  call void @llvm.memcpy.p4.p1.i64(ptr addrspace(4) %generic, ptr addrspace(1) @value, i64 4, i1 false)
  call void @llvm.memcpy.p0.p1.i64(ptr %private, ptr addrspace(1) @value, i64 4, i1 false)
  store ptr addrspace(4) addrspacecast (ptr null to ptr addrspace(4)), ptr addrspace(1) @generic_of_value
  %copy = alloca %struct.Pair
  %back = addrspacecast ptr addrspace(4) %generic to ptr
  %sum = call spir_func i32 @read_pair(ptr byval(%struct.Pair) %copy)
  store i32 %sum, ptr %back
  %loaded = load i32, ptr addrspace(4) %generic
  store i32 %loaded, ptr addrspace(1) %out
  ret void
}
)";

TEST(NvptxAddressSpaces, CastsIntrinsicsStructsAndByvalTypes) {
    llvm::LLVMContext context;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(kSpirIr, error, context);
    ASSERT_TRUE(module) << error.getMessage().str();
    remap_and_check(*module);
    EXPECT_EQ(module->getFunction("llvm.memcpy.p4.p1.i64"), nullptr);
    llvm::Function* memcpy = module->getFunction("llvm.memcpy.p0.p1.i64");
    ASSERT_NE(memcpy, nullptr);
    EXPECT_EQ(memcpy->getNumUses(), 2u) << "both copies use the one declaration";
    llvm::Function* read_pair = module->getFunction("read_pair");
    ASSERT_NE(read_pair, nullptr);
    llvm::Type* pair = read_pair->getParamByValType(0);
    ASSERT_NE(pair, nullptr);
    std::set<unsigned> spaces;
    add_spaces(pair, &spaces);
    EXPECT_EQ(spaces, (std::set<unsigned>{0, 1})) << "the byval struct holds a generic and a global pointer";
    llvm::Function* kernel = module->getFunction("kernel");
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(kernel->getArg(1)->getType()->getPointerAddressSpace(), 1u);
    EXPECT_EQ(module->getGlobalVariable("table")->getAddressSpace(), 1u);
}

TEST(NvptxAddressSpaces, TypedPointersAreRefused) {
    llvm::LLVMContext context;
    context.setOpaquePointers(false);
    llvm::Module module("typed", context);
    std::string log;
    EXPECT_EQ(remap_to_nvptx_address_spaces(module, &log), ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    EXPECT_NE(log.find("opaque pointers"), std::string::npos) << log;
}

}  // namespace
}  // namespace zehal::compiler
