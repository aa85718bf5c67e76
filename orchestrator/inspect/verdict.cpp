#include "orchestrator/inspect/verdict.hpp"

#include <algorithm>
#include <ranges>
#include <vector>

namespace orc::inspect {

namespace {

using arch::ComputeCapability;
using arch::Variant;

// What users report for JIT-only deployments (the issue that introduced
// inspect): the cost in a form they can weigh against a rebuild.
constexpr std::string_view k_jit_cost =
    "every new process pays the compile and users report ~17% lower throughput (250 vs 300 images/s on an A100)";

std::string names(const std::set<ComputeCapability>& ccs, bool ptx) {
  std::string out;
  for (const auto& cc : ccs) {
    if (!out.empty()) out += ", ";
    out += ptx ? cc.compute() : cc.sm();
  }
  return out;
}

// Why the cubins that exist do not load, in the user's terms: the first rule
// that excludes them (a, then major, then minor).
std::string why_no_sass(const std::set<ComputeCapability>& sass, ComputeCapability device) {
  if (sass.empty()) return "";
  const bool any_same_major = std::ranges::any_of(sass, [&](const ComputeCapability& cc) {
    return cc.major() == device.major() && cc.variant() != Variant::arch_specific;
  });
  const bool any_a =
      std::ranges::any_of(sass, [](const ComputeCapability& cc) { return cc.variant() == Variant::arch_specific; });
  std::string out = names(sass, false) + ": ";
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
  std::string out = names(ptx, true) + ": ";
  const bool any_above = std::ranges::any_of(ptx, [&](const ComputeCapability& cc) { return cc.base() > device; });
  if (any_above)
    out += "PTX JIT-compiles only for a GPU at or above its compute capability";
  else
    out += "'a' PTX runs only on exactly its compute capability and 'f' PTX only inside its family";
  return out;
}

}  // namespace

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::native:
      return "native";
    case Outcome::jit:
      return "jit";
    case Outcome::none:
      return "none";
  }
  return "none";
}

Verdict judge(const std::set<ComputeCapability>& sass, const std::set<ComputeCapability>& ptx,
              ComputeCapability device) {
  // A device is a plain CC; a variant on it would only confuse the rules.
  device = device.base();
  const std::string dev = device.dotted();

  // Sets iterate ascending, so the last match is the highest: the cubin the
  // driver prefers, and the newest PTX it can still compile.
  std::optional<ComputeCapability> best_sass;
  for (const auto& cc : sass)
    if (cc.sass_runs_on(device)) best_sass = cc;
  if (best_sass) {
    std::string detail = "runs natively from " + best_sass->sm() + " SASS";
    if (best_sass->base() != device) detail += " (cubins also load on later minors of the same major)";
    return {Outcome::native, best_sass, std::move(detail)};
  }

  std::optional<ComputeCapability> best_ptx;
  for (const auto& cc : ptx)
    if (cc.ptx_runs_on(device)) best_ptx = cc;
  if (best_ptx) {
    return {Outcome::jit, best_ptx,
            "runs by JIT of " + best_ptx->compute() + " PTX: " + std::string(k_jit_cost) + "; add " + device.sm()};
  }

  if (sass.empty() && ptx.empty()) {
    return {Outcome::none, std::nullopt,
            "no device code at all: \"no kernel image is available\" (error 209); add " + device.sm() + " or " +
                device.compute()};
  }
  // What is there and why it does not load, then the remedy.
  std::string why = why_no_sass(sass, device);
  if (const std::string p = why_no_ptx(ptx, device); !p.empty()) why += (why.empty() ? "" : "; ") + p;
  std::string detail = "no SASS for " + dev + " and no PTX at or below it (" + why +
                       "): \"no kernel image is available\" (error 209); add " + device.sm() + " or " +
                       device.compute();
  return {Outcome::none, std::nullopt, std::move(detail)};
}

}  // namespace orc::inspect
