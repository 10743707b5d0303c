// weft-info: which plugins weft found, which it accepted (and why it rejected the others), the
// devices they provide and the ops each device type has kernels for.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "info_report.h"
#include "weft/logging.h"

int main(int argc, char** argv) {
  CLI::App app{"weft-info: plugins, devices and kernels as this process's weft runtime sees them"};
  bool verbose = false, json = false;
  std::vector<std::string> extra;
  app.add_flag("-v,--verbose", verbose, "also print the discovery trace (each directory searched, each file tried)");
  app.add_option("-p,--plugin", extra, "load this plugin file explicitly (repeatable)");
  app.add_flag("--json", json, "print the report as JSON");
  CLI11_PARSE(app, argc, argv);
  try {
    weft::Runtime& rt = weft::Runtime::Get();
    for (const auto& path : extra) rt.LoadPlugin(path);
    if (json) {
      std::printf("%s\n", weft::tools::JsonReport(rt, verbose).dump(2).c_str());
    } else {
      std::fputs(weft::tools::TextReport(rt, verbose).c_str(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-info: %s\n", e.what());
    return 1;
  }
  return 0;
}
