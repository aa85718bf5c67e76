// Judging one set of images (cubins and PTX) for one GPU: the rules of
// cuda-compat.md 6.2 and the driver's JIT; modules and whole files are
// verdict_file.cpp's.
#include "orchestrator/inspect/verdict.hpp"

#include <algorithm>
#include <ranges>
#include <vector>

#include "orchestrator/inspect/verdict_names.hpp"

namespace orc::inspect {

namespace {

using arch::ComputeCapability;
using arch::Variant;

// What is known of the JIT path, without figures the tool did not measure:
// the driver compiles the PTX when the module is first loaded on a GPU model,
// and keeps the result in the user's cache (cuda-compat.md 6.2).
constexpr std::string_view k_jit_cost =
    "the driver compiles it for this GPU when the module is first loaded (`orchestrate smoke --artifact` measures "
    "how long on a node) and caches the result per user (~/.nv/ComputeCache)";

// Why the cubins that exist do not load, in the user's terms: the first rule
// that excludes them (a, then major, then minor).
std::string why_no_sass(const std::set<ComputeCapability>& sass, ComputeCapability device) {
  if (sass.empty()) return "";
  const bool any_same_major = std::ranges::any_of(sass, [&](const ComputeCapability& cc) {
    return cc.major() == device.major() && cc.variant() != Variant::arch_specific;
  });
  const bool any_a =
      std::ranges::any_of(sass, [](const ComputeCapability& cc) { return cc.variant() == Variant::arch_specific; });
  std::string out = cc_names(sass, false) + ": ";
  if (any_same_major)
    out += "a cubin loads only on a GPU of the same major whose minor is not below its own";
  else if (any_a && std::ranges::all_of(
                        sass, [](const ComputeCapability& cc) { return cc.variant() == Variant::arch_specific; }))
    out += "'a' cubins load only on exactly their own compute capability";
  else
    out += "SASS never crosses a major version";
  return out;
}

std::string why_no_ptx(const std::set<ComputeCapability>& ptx, ComputeCapability device) {
  if (ptx.empty()) return "";
  std::string out = cc_names(ptx, true) + ": ";
  const bool any_above = std::ranges::any_of(ptx, [&](const ComputeCapability& cc) { return cc.base() > device; });
  if (any_above)
    out += "PTX JIT-compiles only for a GPU at or above its compute capability";
  else
    out += "'a' PTX runs only on exactly its compute capability and 'f' PTX only inside its family";
  return out;
}

}  // namespace

std::string cc_names(const std::set<ComputeCapability>& ccs, bool ptx) {
  std::string out;
  for (const auto& cc : ccs) {
    if (!out.empty()) out += ", ";
    out += ptx ? cc.compute() : cc.sm();
  }
  return out;
}

std::string ptx_names(const std::vector<PtxImage>& ptx) {
  std::set<ComputeCapability> archs;
  for (const auto& p : ptx) archs.insert(p.arch);
  return cc_names(archs, true);
}

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::native:
      return "native";
    case Outcome::jit:
      return "jit";
    case Outcome::none:
      return "none";
    case Outcome::link:
      return "link";
    case Outcome::partial:
      return "partial";
    case Outcome::no_kernels:
      return "no-kernels";
  }
  return "none";
}

namespace {

// "PTX ISA 8.7 needs driver >= 570.26", or without a table row just the ISA.
std::string isa_needs(const util::Version& isa, const DriverFacts& facts) {
  std::string out = "PTX ISA " + isa.str();
  if (facts.driver_for_isa)
    if (const auto d = facts.driver_for_isa(isa)) out += " needs driver >= " + d->str();
  return out;
}

enum class IsaFit { ok, too_new, beyond_tables };

// Whether the driver's JIT compiles this PTX: at or past the GA driver of the
// first toolkit that emits its ISA. An ISA newer than every table row is
// `too_new` for a driver the tables know, and unknown past them.
IsaFit isa_fit(const PtxImage& p, const DriverFacts& facts) {
  if (p.isa.empty() || !facts.driver) return IsaFit::ok;
  if (facts.driver_for_isa)
    if (const auto need = facts.driver_for_isa(p.isa)) return *facts.driver < *need ? IsaFit::too_new : IsaFit::ok;
  if (!facts.max_ptx_isa.empty() && !(facts.max_ptx_isa < p.isa)) return IsaFit::ok;
  return facts.newer_than_tables ? IsaFit::beyond_tables : IsaFit::too_new;
}

}  // namespace

Verdict judge(const std::set<ComputeCapability>& sass, const std::vector<PtxImage>& ptx, ComputeCapability device,
              const DriverFacts& facts) {
  // A device is a plain CC; a variant on it would only confuse the rules.
  device = device.base();
  const std::string dev = device.dotted();

  // Sets iterate ascending, so the last match is the highest: the cubin the
  // driver prefers.
  std::optional<ComputeCapability> best_sass;
  for (const auto& cc : sass)
    if (cc.sass_runs_on(device)) best_sass = cc;
  if (best_sass) {
    std::string detail = "runs natively from " + best_sass->sm() + " SASS";
    if (best_sass->base() != device) detail += " (cubins also load on later minors of the same major)";
    return {Outcome::native, best_sass, std::move(detail), true};
  }

  // The PTX the driver would compile: the highest arch at or below the device.
  const PtxImage* best = nullptr;
  for (const auto& p : ptx)
    if (p.arch.ptx_runs_on(device) && (!best || best->arch < p.arch || (best->arch == p.arch && best->isa < p.isa)))
      best = &p;
  const IsaFit fit = best ? isa_fit(*best, facts) : IsaFit::ok;
  if (best && fit == IsaFit::too_new) {
    return {Outcome::none, std::nullopt,
            "no SASS for " + dev + ", and the " + best->arch.compute() + " PTX is too new for driver " +
                facts.driver->str() + " (" + isa_needs(best->isa, facts) + ", the driver compiles up to " +
                (facts.max_ptx_isa.empty() ? std::string("none the tables name") : facts.max_ptx_isa.str()) +
                "): CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222); add " + device.sm() +
                " or build the PTX with a toolkit this driver serves"};
  }
  if (best) {
    std::string detail = "runs by JIT of " + best->arch.compute() + " PTX";
    if (!best->isa.empty() && !facts.driver) detail += " (" + isa_needs(best->isa, facts) + ")";
    if (fit == IsaFit::beyond_tables)
      detail += " (PTX ISA " + best->isa.str() + " is newer than the tables; whether driver " + facts.driver->str() +
                " compiles it is not known)";
    detail += ": " + std::string(k_jit_cost) + "; " + device.sm() + " SASS would load without it";
    return {Outcome::jit, best->arch, std::move(detail)};
  }

  if (sass.empty() && ptx.empty()) {
    return {Outcome::none, std::nullopt,
            "no device code at all: \"no kernel image is available\" (error 209); add " + device.sm() + " or " +
                device.compute()};
  }
  // What is there and why it does not load, then the remedy.
  std::set<ComputeCapability> ptx_archs;
  for (const auto& p : ptx) ptx_archs.insert(p.arch);
  std::string why = why_no_sass(sass, device);
  if (const std::string p = why_no_ptx(ptx_archs, device); !p.empty()) why += (why.empty() ? "" : "; ") + p;
  std::string detail = "no SASS for " + dev + " and no PTX at or below it (" + why +
                       "): \"no kernel image is available\" (error 209); add " + device.sm() + " or " +
                       device.compute();
  return {Outcome::none, std::nullopt, std::move(detail)};
}

Verdict judge(const std::set<ComputeCapability>& sass, const std::set<ComputeCapability>& ptx, ComputeCapability device,
              const DriverFacts& facts) {
  std::vector<PtxImage> images;
  for (const auto& cc : ptx) images.push_back({cc, {}});
  return judge(sass, images, device, facts);
}

}  // namespace orc::inspect
