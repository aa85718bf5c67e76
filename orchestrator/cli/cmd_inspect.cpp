#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <ostream>

#include <unistd.h>
#include "orchestrator/app/inspect/inspect.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/fs.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Where it runs (--gpu, --cc, --tier): per GPU, "native" (a cubin it loads), "jit"
(only PTX the driver compiles at first load: a warning), "none" ("no kernel
image is available", error 209; or PTX newer than --driver / the tier's driver
compiles, error 222; or a CUDA runtime newer than the driver, error 35) or
"link" (relocatable device code in a .o/.a: it runs only after a device link)
or "partial" (some kernel modules have code for the GPU and some do not: a
warning, since libraries that pick kernels per GPU are built so).
Only the modules the runtime loads count (.nv_fatbin, not __nv_relfatbin), each
module with kernels on its own; libraries that load or build kernels at run
time (cuFFT, cuSPARSE, cuDNN) are said to, and never fail on that alone.

A directory of fetched sets (what 'orchestrate fetch' unpacks, each with its signed
manifest in .orchestrate/set.v1/; the directory itself or the folders directly in
it) is judged per set: each set's files against its own tier, the configuration's
tier of the name its manifest records (with its driver:), else the GPUs its signed
manifest records; the report says which and from where. A set whose signature
does not verify here, and any file outside the sets, is judged against every
tier of the configuration. --all-tiers, --tier, --gpu and --cc judge every file
against every tier (or those asked).

Member paths: lib.a:k.o (ar member), dist.whl!/torch/lib/libx.so (package
member), rel.tar.zst!/dist/t.whl!/lib/libx.so (one level of nesting).

Exit codes: 0 ok; 1 some GPU gets "none" (not for libraries that build their
own kernels at run time), for a directory of fetched sets: a set that does not
run on its own tier's GPUs, or one nothing could judge; 2 bad usage, an unreadable file or a
damaged one (the report still lists what came before the damage).
Exception: with --list-elf/--list-ptx the exit code is cuobjdump's, passed
through unchanged so scripts keep working: 0 listed, 1 fatal (corrupt input),
255 the file holds no device code.)";

}  // namespace

void attach_inspect(CLI::App& sub, Io& io) {
  struct Options {
    std::vector<std::string> files;
    bool list_elf = false;
    bool list_ptx = false;
    std::vector<std::string> short_list;  // cuobjdump's -lelf / -lptx
    bool all = false;
    bool exact = false;
    std::vector<std::string> gpus;
    std::vector<std::string> ccs;
    std::vector<std::string> tiers;
    std::string file;
    std::string driver;
    bool json = false;
    bool all_tiers = false;
    unsigned threads = 0;
    std::string report;
  };
  auto opt = std::make_shared<Options>();
  sub.add_option("files", opt->files,
                 "Binaries to inspect: .so, .o, .a, executables, cubins, fatbins, wheels, zips, "
                 "tar, tar.gz, tar.xz, tar.zst; or one image: docker://REF (the local engine's), "
                 "oci://HOST/REPO:TAG or @sha256:... (a registry's), or a directory (a root file system, "
                 "a wheelhouse)")
      ->required();
  auto* list_elf =
      sub.add_flag("--list-elf", opt->list_elf, "List the ELF (SASS) images as cuobjdump 13.0 --list-elf does");
  auto* list_ptx = sub.add_flag("--list-ptx", opt->list_ptx, "List the PTX files as cuobjdump 13.0 --list-ptx does");
  // CLI11 has no single-dash long names; a short option with an attached
  // value accepts cuobjdump's spelling "-lelf" / "-lptx" all the same.
  auto* short_list = sub.add_option("-l", opt->short_list, "cuobjdump's short forms: -lelf, -lptx")
                         ->check(CLI::IsMember({"elf", "ptx"}))
                         ->allow_extra_args(false);
  sub.add_flag("--all", opt->all,
               "With --list-*: both .nv_fatbin and __nv_relfatbin, as cuobjdump -all (the report always reads both)");
  sub.add_flag("--exact", opt->exact, "Name compressed cubins from their decompressed ELF, as cuobjdump does (slower)");
  auto* gpu = sub.add_option("--gpu", opt->gpus, "Say where it runs on this GPU (product name; repeatable)");
  auto* cc =
      sub.add_option("--cc", opt->ccs, "Say where it runs on a GPU of this compute capability (X.Y; repeatable)");
  auto* tier = sub.add_option("--tier", opt->tiers, "Say where it runs on every GPU of this tier (repeatable)");
  auto* driver = sub.add_option("--driver", opt->driver,
                                "Judge PTX and the CUDA runtime against this driver (580.65.06; default: the tier's "
                                "driver:, else say which driver each path needs)");
  auto* all_tiers = sub.add_flag("--all-tiers", opt->all_tiers,
                                 "With a directory of fetched sets: judge every file against every tier of the "
                                 "configuration, not each set against its own tier");
  sub.add_option("-f,--file", opt->file,
                 "Configuration file for --tier (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  auto* json = sub.add_flag("--json", opt->json,
                            "Print {\"files\": [...], \"warnings\": [...]} as JSON on stdout, nothing else");
  auto* report = sub.add_option("--report", opt->report,
                                "With an image or directory: also write the coverage report to FILE.html (one "
                                "self-contained page) or FILE.md (Markdown for a pull request comment)");
  sub.add_option("--threads", opt->threads, "Worker threads hashing and scanning files (default: one per core)");
  for (auto* listing : {list_elf, list_ptx, short_list})
    for (auto* other : {gpu, cc, tier, json, driver, report}) listing->excludes(other);
  for (auto* named : {gpu, cc, tier}) all_tiers->excludes(named);
  sub.footer(k_footer);

  sub.callback([opt, &io] {
    std::optional<app::ImageSource> image;
    if (!opt->list_elf && !opt->list_ptx && opt->short_list.empty())
      for (const auto& f : opt->files)
        if (auto s = app::parse_image_source(f)) {
          // Beside other files a directory stays what it was before images:
          // an entry that cannot be read. Alone it is a root file system.
          if (s->kind == app::ImageSourceKind::directory && opt->files.size() > 1) continue;
          if (opt->files.size() > 1)
            throw util::Failure(util::ExitCode::bad_input, "'" + util::printable(f) +
                                                               "' is an image or a directory: inspect one at a time, "
                                                               "without files beside it");
          image = std::move(s);
        }
    if (!opt->report.empty() && !image)
      throw util::Failure(util::ExitCode::bad_input,
                          "--report is for an image (docker://, oci://) or a directory; for files use --json");
    if (opt->all_tiers && !image)
      throw util::Failure(util::ExitCode::bad_input,
                          "--all-tiers is for a directory of fetched sets; for files name the tiers with --tier");
    std::string report_format;
    if (!opt->report.empty()) {
      const auto ext = std::filesystem::path(opt->report).extension().string();
      if (ext == ".html" || ext == ".htm")
        report_format = "html";
      else if (ext == ".md" || ext == ".markdown")
        report_format = "md";
      else
        throw util::Failure(util::ExitCode::bad_input, "--report " + util::printable(opt->report) +
                                                           ": name it FILE.html (a page) or FILE.md (Markdown)");
    }
    if (image) {
      app::InspectRequest request;
      request.gpus = opt->gpus;
      request.ccs = opt->ccs;
      request.tiers = opt->tiers;
      request.driver = opt->driver;
      request.set_tiers = opt->all_tiers ? app::SetTiers::every : app::SetTiers::own;
      if (!opt->tiers.empty() || !opt->file.empty()) request.config = site::locate_config(opt->file);
      request.exact = opt->exact;
      request.threads = opt->threads;
      const app::ImageReport result = app::cover_image(request, *image);
      if (!report_format.empty()) {
        const std::string page = report_format == "html" ? coverage_html(result) : coverage_markdown(result);
        if (auto written = util::write_file_atomic(opt->report, page); !written)
          throw util::Failure(util::ExitCode::bad_input,
                              "--report " + util::printable(opt->report) + ": " + written.error().message);
      }
      const bool colour = !opt->json && ::isatty(STDOUT_FILENO) == 1 && !util::env_get("NO_COLOR");
      emit(io, result, opt->json ? Format::json : Format::text, colour);
      if (!report_format.empty() && !opt->json) io.err << "report written to " << opt->report << "\n";
      return;
    }
    app::InspectRequest request;
    for (const auto& f : opt->files) request.paths.emplace_back(f);
    request.list = {.elf = opt->list_elf, .ptx = opt->list_ptx, .all_sections = opt->all, .exact = opt->exact};
    for (const auto& s : opt->short_list) (s == "elf" ? request.list.elf : request.list.ptx) = true;
    if (request.list.elf || request.list.ptx) request.mode = app::InspectMode::list;
    request.gpus = opt->gpus;
    request.ccs = opt->ccs;
    request.tiers = opt->tiers;
    request.driver = opt->driver;
    if (!opt->tiers.empty()) request.config = site::locate_config(opt->file);
    request.json = opt->json;
    request.exact = opt->exact;
    request.threads = opt->threads;
    emit(io, app::inspect(request), opt->json ? Format::json : Format::text);
  });
}

}  // namespace orc::cli
