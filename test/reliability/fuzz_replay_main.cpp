// SPDX-License-Identifier: Apache-2.0
// Runs the fuzz target without libFuzzer, so it can be an ordinary test with
// any compiler: every file (or every file of a directory) named on the command
// line, then `--random N` inputs from a fixed-seed generator; with
// `--each-call` (the registry target) first every call of every registry
// case, unchanged and with generated contents.
//   rel_fuzz_replay [--each-call] corpus_dir [file ...] [--random N]
#include "fuzz_input.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
// fuzz_registry.cpp's (absent from the API target's build).
extern "C" int gpuprim_fuzz_registry_each_call(void) __attribute__((weak));

namespace {

int run_file(const std::filesystem::path &path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        std::fprintf(stderr, "cannot read %s\n", path.string().c_str());
        std::exit(1);
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    return 1;
}

}  // namespace

int main(int argc, char **argv) {
    int files = 0, each_call = 0;
    unsigned long random_inputs = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--each-call") == 0) {
            if (!gpuprim_fuzz_registry_each_call) {
                std::fprintf(stderr, "--each-call: this target is not the registry's\n");
                return 1;
            }
            each_call = gpuprim_fuzz_registry_each_call();
            continue;
        }
        if (std::strcmp(argv[i], "--random") == 0 && i + 1 < argc) {
            random_inputs = std::strtoul(argv[++i], nullptr, 10);
            continue;
        }
        std::filesystem::path path(argv[i]);
        if (std::filesystem::is_directory(path)) {
            for (const auto &entry : std::filesystem::directory_iterator(path))
                if (entry.is_regular_file()) files += run_file(entry.path());
        } else {
            files += run_file(path);
        }
    }
    // The same inputs on every run and platform.
    uint64_t state = 0x9E3779B97F4A7C15ull;
    std::vector<uint8_t> bytes;
    for (unsigned long n = 0; n < random_inputs; ++n) {
        bytes.resize(16 + (n * 37) % 1500);
        for (uint8_t &byte : bytes) byte = gpuprim_fuzz::next_fixed_byte(state);
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    }
    if (each_call) std::printf("fuzz replay: %d registry calls passed\n", each_call);
    std::printf("fuzz replay: %d corpus files and %lu random inputs passed\n", files, random_inputs);
    return 0;
}
