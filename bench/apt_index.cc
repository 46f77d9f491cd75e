// The apt index's insertion (apt/index.h): N versions of one package in a Packages text, oldest first (the
// order NVIDIA's repositories list them), parsed into an Index; prints N and the seconds it took.
//   build/bench/apt_index 40000
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "apt/index.h"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 40000;
  std::string text;
  for (int i = 0; i < n; ++i)
    text +=
        "Package: libfoo\nVersion: 1." + std::to_string(i) + "-1\nArchitecture: amd64\nFilename: ./f.deb\n\n";
  const auto start = std::chrono::steady_clock::now();
  gp::apt::Index index;
  gp::apt::ParsePackages(text, "amd64", index);
  const auto* list = index.Find("libfoo");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d versions: %.3f s (%zu kept)\n", n, s, list ? list->size() : size_t{0});
  return 0;
}
