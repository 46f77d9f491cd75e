// One streaming install of a redistributable cuDNN tree (redist/install.h) into ROOT (a temp "/"), for
// bench/redist.sh. Usage: redist_install BASE ROOT [CA_FILE] (BASE: URL ending in "/" or a directory)
#include <cstdio>

#include "redist/install.h"
#include "sys/http.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: redist_install BASE ROOT [CA_FILE]\n");
    return 2;
  }
  gp::manifest::ComponentSpec c;
  c.version.version = gp::Version::Parse("9.12.0.46");
  c.cuda_major = 13;
  c.source = "redist";
  c.redist.release = "9.12.0";
  c.redist.components = {"cudnn"};
  c.redist.base = argv[1];
  gp::sys::DiskFs fs(argv[2]);
  auto http = gp::sys::MakeCurlHttpClient();
  gp::redist::InstallOptions opt;
  if (argc > 3) opt.ca_file = argv[3];
  auto r = gp::redist::Install(gp::redist::MakeRequest("cudnn", c, "x86_64"), fs, *http, opt);
  if (!r.ok()) {
    std::fprintf(stderr, "redist_install: %s\n", r.error.c_str());
    return 1;
  }
  std::printf("%s %llu bytes\n", r.prefix.c_str(), static_cast<unsigned long long>(r.bytes));
  return 0;
}
