# lit configuration for infer's IR and importer tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "INFER"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "make_inputs.py", "models", "corpus"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.infer_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.infer_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["infer-opt", "infer-compile", "infer-run"], tool_dirs)
# Built with the CUDA toolkit: infer-compile generates GPU code (NVRTC).
if config.infer_have_cuda:
    config.available_features.add("cuda-codegen")
config.substitutions.append(("%test_models", config.test_models_dir))
