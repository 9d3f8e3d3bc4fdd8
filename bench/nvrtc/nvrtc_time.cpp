//===- nvrtc_time.cpp - how long NVRTC takes for one CUDA source ----------===//
//
// Compiles one .cu file with NVRTC for sm_90a with infer-compile's options
// (codegen/cuda/Nvrtc.cpp) plus any given on the command line, and prints
// the result code, the wall time and a hash of the cubin. With
// `-time=FILE` NVRTC writes its phases (front end, NVVM optimizer, PTX
// translation) to FILE.
//
//   g++ -std=c++17 -O1 -o nvrtc_time bench/nvrtc/nvrtc_time.cpp -I$CUDA/include \
//       -L$CUDA/lib64 -lnvrtc -Wl,-rpath,$CUDA/lib64
//   REPO=. nvrtc_time kernels.cu --split-compile=0 [-time=phases.csv]
//
// bench/nvrtc/compare.sh writes the sources (one with every kernel a
// tinyllama artifact names, six with a share each) and times them.
//
//===----------------------------------------------------------------------===//
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: REPO=DIR %s FILE.cu [NVRTC options]\n", argv[0]);
    return 2;
  }
  std::ifstream file(argv[1]);
  if (!file) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream text;
  text << file.rdbuf();
  const std::string source = text.str();
  const char *repo = std::getenv("REPO");
  const char *cuda = std::getenv("CUDA_HOME");
  const std::string cudaDir = cuda ? cuda : "/usr/local/cuda";
  const std::string include = std::string("-I") + (repo ? repo : "."),
                    cudaInclude = "-I" + cudaDir + "/include",
                    ccclInclude = "-I" + cudaDir + "/include/cccl";
  std::vector<const char *> options = {"--gpu-architecture=sm_90a", include.c_str(),
                                       cudaInclude.c_str(), ccclInclude.c_str(), "-std=c++17",
                                       "-DNDEBUG"};
  for (int i = 2; i < argc; ++i)
    options.push_back(argv[i]);
  const auto start = std::chrono::steady_clock::now();
  nvrtcProgram program;
  nvrtcResult result = nvrtcCreateProgram(&program, source.c_str(), argv[1], 0, nullptr, nullptr);
  if (result == NVRTC_SUCCESS)
    result = nvrtcCompileProgram(program, int(options.size()), options.data());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // FNV-1a of the cubin: whether two option sets give the same code.
  unsigned long long hash = 1469598103934665603ull;
  size_t cubinSize = 0;
  if (result == NVRTC_SUCCESS && nvrtcGetCUBINSize(program, &cubinSize) == NVRTC_SUCCESS) {
    std::string cubin(cubinSize, '\0');
    nvrtcGetCUBIN(program, cubin.data());
    for (unsigned char byte : cubin)
      hash = (hash ^ byte) * 1099511628211ull;
  }
  std::printf("%s: %s, %.2f s, cubin %zu bytes, fnv1a %016llx\n", argv[1],
              nvrtcGetErrorString(result), seconds, cubinSize, hash);
  if (result != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    std::fprintf(stderr, "%s\n", log.c_str());
    return 1;
  }
  return 0;
}
