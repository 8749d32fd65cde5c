// zehal-spirv-reader: SPIR-V on standard input, verified LLVM bitcode (OpenCL 1.2
// builtins) on standard output. The SPIRV-LLVM-Translator ends the process on input it
// rejects (std::exit, failed assertions), so zehal runs it here, in a process of its own.
// Exit status 0 with bitcode, else 1 with the reason on standard error.
#include <LLVMSPIRVLib.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

int main() {
    std::string spirv{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    SPIRV::TranslatorOpts options(SPIRV::VersionNumber::MaximumVersion);
    options.enableAllExtensions();
    options.setDesiredBIsRepresentation(SPIRV::BIsRepresentation::OpenCL12);
    llvm::LLVMContext context;
    // The translator of LLVM 15 writes typed pointers (as its own llvm-spirv tool does);
    // zehal reads the bitcode back with opaque ones.
    context.setOpaquePointers(false);
    llvm::Module* module = nullptr;
    std::string error;
    std::istringstream input(spirv);
    if (!llvm::readSpirv(context, options, input, module, error) || module == nullptr) {
        llvm::errs() << (error.empty() ? std::string("the translator gave no reason") : error) << "\n";
        return 1;
    }
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (llvm::verifyModule(*module, &stream)) {
        llvm::errs() << "the translation is not valid LLVM IR: " << stream.str() << "\n";
        return 1;
    }
    llvm::WriteBitcodeToFile(*module, llvm::outs());
    llvm::outs().flush();
    delete module;
    return 0;
}
