#include <CLI/CLI.hpp>
#include <memory>

#include "orchestrator/app/stamp/stamp.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(The constraints (the NVIDIA container toolkit's syntax: docs.nvidia.com,
container-toolkit "Specialized Configurations with Docker"; space ORs, comma ANDs,
and every NVIDIA_REQUIRE_* variable must hold):
  NVIDIA_REQUIRE_CUDA=cuda>=M.0    M: the newest CUDA runtime major the image links
  NVIDIA_REQUIRE_ARCH=arch>=8.0,arch<9.0 arch>=9.0 ...
                                   the GPUs every library with device code runs on,
                                   natively or (unless --native-only) by JIT of its PTX
An image's own NVIDIA_REQUIRE_CUDA is kept as NVIDIA_REQUIRE_CUDA_IMAGE (still checked);
its NVIDIA_DISABLE_REQUIRE, which makes the toolkit skip every check, is removed (and said).
The image is judged on the tier first; one that gets "none" there is not stamped.
docker://REF: a new image REPO:TAG-TIER (or --tag) through the engine, the old one untouched.
oci://HOST/REPO:TAG: a new config and manifest pushed as REPO:TAG-TIER (or --tag).
--recipe R (no IMAGE): the image R's `image: REPO` made for the tier, REPO:TIER, stamped
only while it holds R's current set for the tier (the set push and fetch --tier hand out).

Exit codes: 0 stamped; 1 the image gets "none" on a GPU of the tier (not stamped);
2 bad usage, an unknown tier, content refused; 3 the engine or the registry failed.)";

}  // namespace

void attach_stamp(CLI::App& sub, Io& io) {
  struct Options {
    std::string image;
    std::string recipe;
    std::string tier;
    std::string file;
    std::string tag;
    bool native_only = false;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  sub.footer(k_footer);
  auto* image = sub.add_option("image", opt->image, "docker://REF (the local engine's) or oci://HOST/REPO:TAG");
  auto* recipe = sub.add_option("-r,--recipe", opt->recipe,
                                "Instead of IMAGE: the image this recipe made of its current set for the tier");
  image->excludes(recipe);
  recipe->excludes(image);
  sub.add_option("--tier", opt->tier, "The tier the image is for")->required();
  sub.add_option("-f,--file", opt->file,
                 "Configuration file (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  sub.add_option("--tag", opt->tag, "The stamped image's tag (default: the image's tag and the tier: TAG-TIER)");
  sub.add_flag("--native-only", opt->native_only, "Allow only GPUs with a cubin in every library (no JIT)");
  sub.add_flag("--json", opt->json, "Print the coverage and the stamp as JSON");
  sub.callback([opt, &io] {
    if (opt->image.empty() && opt->recipe.empty())
      util::fail_input("stamp needs an IMAGE (docker://REF or oci://HOST/REPO:TAG) or --recipe R");
    const app::StampReport r = app::stamp(app::StampRequest{.image = opt->image,
                                                            .recipe = opt->recipe,
                                                            .tier = opt->tier,
                                                            .config = site::locate_config(opt->file),
                                                            .tag = opt->tag,
                                                            .native_only = opt->native_only});
    if (opt->json) {
      io.out << stamp_json(r);
    } else {
      if (r.from_recipe) {
        io.out << opt->recipe << ": the current set for " << opt->tier << " is " << r.from_recipe->set.to_string()
               << ", held by " << r.from_recipe->image.substr(std::string_view("docker://").size()) << "\n";
        if (r.from_recipe->newer)
          io.out << "  a newer set by time, " << r.from_recipe->newer->to_string()
                 << ", is not current ('orchestrate promote' makes it so)\n";
      }
      io.out << coverage_text(r.coverage, false);
      io.out << "\n";
      if (r.stamped_ok) {
        io.out << "stamped " << util::printable(r.stamped) << " (" << r.identity << ")\n";
      } else {
        std::string why;
        if (r.coverage.exit_code == util::ExitCode::bad_input)
          why = "files of the image are damaged (above)";
        else if (r.values.runs_nowhere)
          why = "its libraries share no GPU they all run on";
        else if (!r.values.refused_gpus.empty())
          why = "NVIDIA_REQUIRE_ARCH would refuse " + util::printable(util::join(r.values.refused_gpus, ", ")) +
                " of " + util::printable(opt->tier) +
                (opt->native_only ? " (only PTX reaches it; drop --native-only)" : "");
        else
          why = "the image gets \"none\" on a GPU of " + util::printable(opt->tier);
        io.out << "not stamped: " << why << "\n";
      }
      if (!r.values.require_cuda.empty()) io.out << "  NVIDIA_REQUIRE_CUDA=" << r.values.require_cuda << "\n";
      if (!r.values.require_arch.empty()) io.out << "  NVIDIA_REQUIRE_ARCH=" << r.values.require_arch << "\n";
      for (const auto& e : r.removed)
        io.out << "  removed " << util::printable(e) << ", which makes every node skip these requirements\n";
      for (const auto& u : r.values.unbounded)
        io.out << "  not bounding NVIDIA_REQUIRE_ARCH: " << util::printable(u)
               << " (registers no kernel; builds its own at run time)\n";
      // The container toolkit checks the GPU and the driver, not the image's
      // own libraries: a file linking one the image lacks starts nowhere.
      for (const auto& n : r.coverage.missing)
        io.out << "  no NVIDIA_REQUIRE_* can stand in for " << util::printable(inspect::describe_need(n.library))
               << ": the image must hold it\n";
    }
    io.exit_code = r.coverage.exit_code;
  });
}

}  // namespace orc::cli
