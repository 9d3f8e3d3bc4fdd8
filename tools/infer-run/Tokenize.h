//===- Tokenize.h - infer-run tokenize: text <-> ids for scripts and tests -===//
#ifndef INFER_TOOLS_INFER_RUN_TOKENIZE_H
#define INFER_TOOLS_INFER_RUN_TOKENIZE_H

namespace infer::tools {

/// `infer-run tokenize --tokenizer PATH [--decode]`: argv[0] is "tokenize".
/// Returns the process exit code.
int runTokenizeCommand(int argc, char **argv);

} // namespace infer::tools

#endif // INFER_TOOLS_INFER_RUN_TOKENIZE_H
