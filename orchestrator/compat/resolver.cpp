#include "orchestrator/compat/resolver.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "orchestrator/compat/driver.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::compat {

namespace {

using arch::ComputeCapability;

// Whether `driver` runs SASS of toolkit `t` under minor-version compatibility
// (a driver at or above the floor of t's major, cuda-compat.md 2.3; none
// before CUDA 11), which cannot JIT its PTX.
bool below_mvc_floor(const Toolkit& t, const util::Version& driver) {
  const auto floor = driver_for_runtime(t.version.major());
  return !floor || driver < *floor;
}

std::string gpu_label(const TargetGpu& g) {
  return g.name == g.cc.dotted() ? "CC " + g.name : g.name + " (" + g.cc.dotted() + ")";
}

std::vector<const Toolkit*> candidate_toolkits(const ResolveRequest& request) {
  std::vector<const Toolkit*> out;
  for (const auto& t : request.toolkits().rows()) {
    if (!t.released) continue;
    if (!request.candidates.empty() && std::ranges::none_of(request.candidates, [&](const util::Version& v) {
          return v.truncated(2) == t.version.truncated(2);
        }))
      continue;
    out.push_back(&t);
  }
  std::ranges::reverse(out);  // newest first
  return out;
}

std::set<ComputeCapability> distinct_ccs(const std::vector<TargetGpu>& gpus) {
  std::set<ComputeCapability> out;
  for (const auto& g : gpus) out.insert(g.cc.base());
  return out;
}

// The newest cuDNN release for `toolkit` that the range allows and that runs
// on the oldest CC of the tier.
const CudnnRelease* pick_cudnn(const Toolkit& toolkit, const ResolveRequest& request, ComputeCapability oldest) {
  const auto table = cudnn_table();
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    if (!it->supports_cuda(toolkit.version)) continue;
    if (request.cudnn && !request.cudnn->range.contains(it->version)) continue;
    if (oldest < it->min_cc) continue;
    return &*it;
  }
  return nullptr;
}

enum class DriverRule { own_minimum, minor_version_compat };

// Why `toolkit` cannot serve the request, or empty when it can. Under
// DriverRule::own_minimum the tier's driver must meet the toolkit's own
// minimum; under minor_version_compat the family floor is enough.
std::vector<std::string> toolkit_blockers(const Toolkit& t, const ResolveRequest& request,
                                          const CudnnRelease** cudnn_out,
                                          DriverRule rule = DriverRule::minor_version_compat) {
  std::vector<std::string> why;
  const std::string name = "CUDA " + t.version.str();
  if (request.cuda && !request.cuda->range.contains(t.version)) why.push_back(request.cuda->describe());
  for (const auto& shortfall : request.shortfalls)
    if (shortfall.toolkit.truncated(2) == t.version.truncated(2)) why.push_back(shortfall.reason);
  for (const auto& g : request.gpus) {
    if (!t.accepts(g.cc.base())) why.push_back("no sm_" + g.cc.base().digits() + " for " + gpu_label(g));
  }
  if (request.gcc && request.gcc->range.lower() && util::Version(t.max_gcc, 0) < request.gcc->range.lower()->version)
    why.push_back("takes GCC <= " + std::to_string(t.max_gcc) + ", " + request.gcc->describe());
  if (request.driver && !t.driver_meets_minimum(*request.driver) &&
      (rule == DriverRule::own_minimum || below_mvc_floor(t, *request.driver))) {
    if (!t.min_driver.empty())
      why.push_back("needs driver >= " + t.min_driver.str() + ", the tier's driver is " + request.driver->str());
    else if (below_mvc_floor(t, *request.driver))
      why.push_back("needs driver >= " + driver_for_runtime(t.version.major())->str() + " (minimum not known; the " +
                    std::to_string(t.version.major()) + ".x floor), the tier's driver is " + request.driver->str());
    else
      why.push_back("its minimum driver is not known, the tier's driver is " + request.driver->str());
  }
  if (request.needs_cudnn && why.empty()) {
    const auto ccs = distinct_ccs(request.gpus);
    const CudnnRelease* c = ccs.empty() ? nullptr : pick_cudnn(t, request, *ccs.begin());
    if (!c) {
      std::string text = "no cuDNN release";
      if (request.cudnn) text += " in " + request.cudnn->describe();
      text += " supports " + name;
      if (!ccs.empty()) text += " and CC " + ccs.begin()->dotted();
      why.push_back(text);
    }
    if (cudnn_out) *cudnn_out = c;
  }
  return why;
}

std::string range_words(const Toolkit* first, const Toolkit* last) {
  if (!first) return "no toolkit";
  if (first == last) return "CUDA " + first->version.str();
  return "CUDA " + first->version.str() + " to " + last->version.str();
}

// The window of candidate toolkits that compile SASS for `cc`.
std::pair<const Toolkit*, const Toolkit*> candidate_window(const std::vector<const Toolkit*>& newest_first,
                                                           ComputeCapability cc) {
  const Toolkit* first = nullptr;
  const Toolkit* last = nullptr;
  for (const Toolkit* t : newest_first) {
    if (!t->accepts(cc)) continue;
    if (!last) last = t;
    first = t;
  }
  return {first, last};
}

std::string window_words(const Toolkit* first, const Toolkit* last, const Toolkit* table_first,
                         const Toolkit* table_last) {
  if (!first) return "no available toolkit";
  if (first == table_first && last == table_last) return "any toolkit";
  if (first == table_first) return "CUDA <= " + last->version.str();
  if (last == table_last) return "CUDA >= " + first->version.str();
  return "CUDA " + first->version.str() + " to " + last->version.str();
}

// Reasons that explain an empty result in the user's terms: each GPU's own
// window against the recipe's range and against the other GPUs.
std::vector<std::string> explain(const ResolveRequest& request, const std::vector<const Toolkit*>& newest_first) {
  std::vector<std::string> reasons;
  if (newest_first.empty()) {
    reasons.push_back("no toolkit is available (the toolkits list names none the tables know)");
    return reasons;
  }
  const Toolkit* table_first = newest_first.back();
  const Toolkit* table_last = newest_first.front();
  struct Window {
    const TargetGpu* gpu;
    const Toolkit* first;
    const Toolkit* last;
  };
  std::vector<Window> windows;
  std::set<ComputeCapability> seen;
  for (const auto& g : request.gpus) {
    if (!seen.insert(g.cc.base()).second) continue;
    auto [first, last] = candidate_window(newest_first, g.cc.base());
    windows.push_back({&g, first, last});
    if (!first) {
      const auto all = request.toolkits().window(g.cc.base());
      std::string text = gpu_label(g) + " needs ";
      text += all.first ? range_words(all.first, all.last) : "a toolkit newer than every one the tables know";
      text += ", but the available toolkits are";
      for (const Toolkit* t : newest_first) text += " " + t->version.str();
      reasons.push_back(text);
      continue;
    }
    if (request.cuda) {
      bool any = false;
      for (const Toolkit* t : newest_first)
        if (t->accepts(g.cc.base()) && request.cuda->range.contains(t->version)) any = true;
      if (!any)
        reasons.push_back(gpu_label(g) + " needs " + window_words(first, last, table_first, table_last) + ", " +
                          request.cuda->describe());
    }
  }
  // Pairs of GPUs whose windows do not overlap: no single toolkit builds both.
  for (std::size_t i = 0; i < windows.size(); ++i) {
    for (std::size_t j = i + 1; j < windows.size(); ++j) {
      const auto& a = windows[i];
      const auto& b = windows[j];
      if (!a.first || !b.first) continue;
      if (a.last->version < b.first->version || b.last->version < a.first->version) {
        reasons.push_back(gpu_label(*a.gpu) + " needs " + window_words(a.first, a.last, table_first, table_last) +
                          ", " + gpu_label(*b.gpu) + " needs " +
                          window_words(b.first, b.last, table_first, table_last) +
                          ": no single toolkit compiles for both");
      }
    }
  }
  if (reasons.empty()) {
    // The GPUs agree on a toolkit; something else excluded each one.
    for (const Toolkit* t : newest_first) {
      bool all_accept = std::ranges::all_of(request.gpus, [&](const TargetGpu& g) { return t->accepts(g.cc.base()); });
      if (!all_accept) continue;
      for (const auto& why : toolkit_blockers(*t, request, nullptr))
        reasons.push_back("CUDA " + t->version.str() + ": " + why);
    }
  }
  if (reasons.empty()) reasons.push_back("no toolkit satisfies every constraint");
  return reasons;
}

Outcome resolve_unsplit(const ResolveRequest& request, bool want_split);

// Groups CCs oldest first, extending a group while it still resolves.
void suggest_split(const ResolveRequest& request, Unsatisfiable& out) {
  std::map<ComputeCapability, std::vector<const TargetGpu*>> by_cc;
  for (const auto& g : request.gpus) by_cc[g.cc.base()].push_back(&g);
  std::vector<std::vector<const TargetGpu*>> groups;
  std::vector<const Toolkit*> toolkits;
  std::vector<const TargetGpu*> current;
  const Toolkit* current_toolkit = nullptr;
  for (const auto& [cc, gpus] : by_cc) {
    std::vector<const TargetGpu*> trial = current;
    trial.insert(trial.end(), gpus.begin(), gpus.end());
    ResolveRequest sub = request;
    sub.gpus.clear();
    for (const auto* g : trial) sub.gpus.push_back(*g);
    const auto outcome = resolve_unsplit(sub, false);
    if (const auto* r = std::get_if<Resolution>(&outcome)) {
      current = std::move(trial);
      current_toolkit = r->toolkit;
      continue;
    }
    if (!current.empty()) {
      groups.push_back(current);
      toolkits.push_back(current_toolkit);
    }
    sub.gpus.clear();
    for (const auto* g : gpus) sub.gpus.push_back(*g);
    const auto alone = resolve_unsplit(sub, false);
    if (!std::holds_alternative<Resolution>(alone)) return;  // this CC cannot build at all: no split helps
    current = gpus;
    current_toolkit = std::get<Resolution>(alone).toolkit;
  }
  if (!current.empty()) {
    groups.push_back(current);
    toolkits.push_back(current_toolkit);
  }
  if (groups.size() < 2) return;
  std::string hint = "split the tier so each part gets its own binary:";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::vector<std::string> names;
    for (const auto* g : groups[i]) names.push_back(g->name);
    hint += (i ? "; " : " ") + util::join(names, ", ") + " with CUDA " + toolkits[i]->version.str();
    out.split.push_back(std::move(names));
    out.split_toolkits.push_back(toolkits[i]);
  }
  out.split_hint = std::move(hint);
}

// Fields of a toolkit row that matter to a plan: the arch list always; the
// driver only when the tier names one; compilers only when the recipe does.
bool relevant(std::string_view field, const ResolveRequest& request) {
  if (field == "archs" || field == "deprecated" || field == "removed") return true;
  if (field == "min_driver") return request.driver.has_value();
  if (field == "max_gcc" || field == "max_clang") return request.gcc.has_value();
  return false;
}

// The newest toolkit that passes every check under `rule`, or null.
const Toolkit* first_fit(const std::vector<const Toolkit*>& newest_first, const ResolveRequest& request,
                         DriverRule rule, const CudnnRelease** cudnn, std::vector<std::string>* skipped) {
  for (const Toolkit* t : newest_first) {
    const auto blockers = toolkit_blockers(*t, request, cudnn, rule);
    if (blockers.empty()) return t;
    if (skipped) skipped->push_back("CUDA " + t->version.str() + " skipped: " + util::join(blockers, "; "));
  }
  return nullptr;
}

Outcome resolve_unsplit(const ResolveRequest& request, bool want_split) {
  const auto newest_first = candidate_toolkits(request);
  std::vector<std::string> skipped;
  const CudnnRelease* cudnn = nullptr;
  // A toolkit the tier's driver fully supports beats a newer one that would
  // run only under minor-version compatibility (no PTX JIT, limited features).
  const Toolkit* chosen = first_fit(newest_first, request, DriverRule::own_minimum, &cudnn, &skipped);
  if (!chosen && request.driver) {
    skipped.clear();
    chosen = first_fit(newest_first, request, DriverRule::minor_version_compat, &cudnn, &skipped);
  }
  if (const Toolkit* t = chosen) {
    Resolution r;
    r.toolkit = t;
    r.cudnn = cudnn;
    std::vector<ComputeCapability> ccs;
    for (const auto& g : request.gpus) ccs.push_back(g.cc);
    r.archs = arch::select_archs(ccs, request.ptx);
    r.reasons.push_back("CUDA " + t->version.str() + " is the newest available toolkit that compiles " +
                        util::join(r.archs.sass_names(), ", ") +
                        (request.cuda ? " (" + request.cuda->describe() + ")" : ""));
    r.reasons.insert(r.reasons.end(), skipped.begin(), skipped.end());
    if (cudnn)
      r.reasons.push_back("cuDNN " + cudnn->version.str() + " is the newest release for CUDA " + t->version.str() +
                          " that runs on CC " + r.archs.sass.begin()->dotted());
    for (const auto& cc : r.archs.sass)
      if (t->is_deprecated(cc))
        r.warnings.push_back("nvcc " + t->version.str() + " warns that sm_" + cc.digits() + " is deprecated");
    for (const auto& field : t->unconfirmed)
      if (relevant(field, request))
        r.warnings.push_back("CUDA " + t->version.str() + ": '" + std::string(field) +
                             "' is UNCONFIRMED in the reference tables");
    if (cudnn)
      for (const auto& field : cudnn->unconfirmed)
        r.warnings.push_back("cuDNN " + cudnn->version.str() + ": '" + std::string(field) +
                             "' is UNCONFIRMED in the reference tables");
    if (request.driver && !t->driver_meets_minimum(*request.driver)) {
      if (t->min_driver.empty())
        r.warnings.push_back("CUDA " + t->version.str() + "'s minimum driver is not known (not yet sourced): on the " +
                             "tier's driver " + request.driver->str() +
                             " it may run only under minor-version compatibility, and then PTX built by this "
                             "toolkit cannot be JIT-compiled there (error 222)");
      else
        r.warnings.push_back("the tier's driver " + request.driver->str() + " is older than CUDA " + t->version.str() +
                             "'s " + t->min_driver.str() +
                             ": it runs only under minor-version compatibility, and PTX built by "
                             "this toolkit cannot be JIT-compiled there (error 222)");
    }
    if (request.ptx == arch::PtxPolicy::none)
      r.warnings.push_back("ptx: none embeds no PTX: a GPU newer than " + r.archs.sass.rbegin()->dotted() +
                           " gets \"no kernel image is available\"");
    return r;
  }
  Unsatisfiable u;
  u.reasons = explain(request, newest_first);
  if (want_split && distinct_ccs(request.gpus).size() > 1) suggest_split(request, u);
  return u;
}

}  // namespace

std::string RangeConstraint::describe() const { return origin + " " + range.text(); }

Outcome resolve(const ResolveRequest& request) {
  if (request.gpus.empty())
    return Unsatisfiable{.reasons = {"the tier lists no GPUs"}, .split = {}, .split_toolkits = {}, .split_hint = {}};
  if (request.cuda && !request.cuda->range.satisfiable())
    return Unsatisfiable{.reasons = {request.cuda->describe() + " is an impossible range"},
                         .split = {},
                         .split_toolkits = {},
                         .split_hint = {}};
  return resolve_unsplit(request, true);
}

}  // namespace orc::compat
