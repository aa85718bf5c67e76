// Judging a kernel module and a whole file for one GPU (verdict.hpp): the
// runtime's relinking of __nv_relfatbin, relocatable code waiting for its
// device link, files of several kernel modules, kernels loaded at run time.
#include <algorithm>
#include <cstdio>
#include <ranges>
#include <vector>

#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/inspect/verdict_names.hpp"

namespace orc::inspect {

using arch::ComputeCapability;

namespace {

int rank(Outcome o) {
  switch (o) {
    case Outcome::none:
      return 0;
    case Outcome::partial:
      return 1;
    case Outcome::no_kernels:
      return 5;
    case Outcome::jit:
      return 2;
    case Outcome::native:
      return 3;
    case Outcome::link:
      return 4;
  }
  return 0;
}

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

// What relocatable code offers a device link, for a .o or .a member.
Verdict needs_link(const FileReport& file, ComputeCapability device, const DriverFacts& facts) {
  std::set<ComputeCapability> sass;
  std::vector<PtxImage> ptx;
  std::size_t lto = 0;
  for (const Module& m : file.modules) {
    if (m.loadable()) continue;
    sass.insert(m.sass.begin(), m.sass.end());
    ptx.insert(ptx.end(), m.ptx.begin(), m.ptx.end());
    lto += m.lto_entries;
  }
  std::vector<std::string> offers;
  if (!sass.empty()) offers.push_back(cc_names(sass, false) + " SASS");
  if (!ptx.empty()) offers.push_back(ptx_names(ptx) + " PTX");
  if (lto) offers.push_back(std::to_string(lto) + " LTO-IR image" + (lto == 1 ? "" : "s"));
  std::string offer;
  for (const auto& o : offers) offer += (offer.empty() ? "" : ", ") + o;
  const Verdict linked = judge(sass, ptx, device, facts);
  std::string then = linked.outcome == Outcome::native ? "a device link for " + device.sm() + " can use its SASS"
                     : linked.outcome == Outcome::jit  ? "for " + device.dotted() + " it offers only PTX"
                                                       : "it offers nothing for " + device.dotted();
  return {Outcome::link, linked.decided_by,
          "relocatable device code (-rdc): it runs only after a device link (nvcc -dlink, or -rdc=true at the "
          "link); this input offers " +
              (offer.empty() ? std::string("no images") : offer) + "; " + then,
          linked.decided_by_sass};
}

}  // namespace

std::string_view relocatable_only_why(bool ptx) {
  if (ptx)
    return "only in relocatable device code (__nv_relfatbin, from -rdc): the device link puts no PTX in the module "
           "the runtime registers (it makes SASS only), so the runtime JIT-links it at load time, and only on a GPU "
           "the device-linked code has nothing for; to have the PTX in the registered module, build without "
           "separable compilation (no -rdc; CMake: CUDA_SEPARABLE_COMPILATION OFF)";
  return "only in relocatable device code (__nv_relfatbin, from -rdc): the device link did not make it, so the "
         "runtime links it at load time, and only on a GPU the device-linked code has nothing for; to have it in "
         "the registered module, give the device link the same -gencode (nvcc -dlink, or the final nvcc -rdc=true "
         "link; CMake passes CUDA_ARCHITECTURES to it)";
}

namespace {

bool shares_a_name(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end();) {
    if (*i == *j) return true;
    *i < *j ? ++i : ++j;
  }
  return false;
}

// One loadable kernel module, with the runtime's fallback: where the module
// has nothing for the GPU and its kernels came from relocatable modules (an
// -rdc device link: the same kernel names), the runtime links those at load
// time, and each kernel runs if its own relocatable module has code for the
// GPU (the H200: a kernel whose relocatable module had only sm_75 failed
// with "named symbol not found" while its neighbour ran). Kernels of a
// module built without -rdc have no such fallback.
ModuleVerdict judge_module_in(const Module& m, const std::vector<const Module*>& relocatable, ComputeCapability device,
                              const DriverFacts& facts) {
  ModuleVerdict out{.verdict = judge(m.sass, m.ptx, device, facts)};
  if (out.verdict.outcome != Outcome::none || relocatable.empty()) return out;
  std::vector<const Module*> sources;
  std::vector<std::string> covered;
  for (const Module* r : relocatable) {
    if (r->kernels == Kernels::no) continue;
    // Names unknown on either side: the module may be linked from it.
    if (m.kernel_names.empty() || r->kernel_names.empty() || shares_a_name(m.kernel_names, r->kernel_names)) {
      sources.push_back(r);
      covered.insert(covered.end(), r->kernel_names.begin(), r->kernel_names.end());
    }
  }
  if (sources.empty()) return out;
  std::ranges::sort(covered);
  const bool every_kernel_sourced = m.kernel_names.empty() || std::ranges::includes(covered, m.kernel_names);
  std::optional<Verdict> worst_ok;
  std::size_t bad = 0;
  for (const Module* r : sources) {
    Verdict v = judge(r->sass, r->ptx, device, facts);
    if (v.outcome == Outcome::none)
      ++bad;
    else if (!worst_ok || rank(v.outcome) < rank(worst_ok->outcome))
      worst_ok = std::move(v);
  }
  if (!worst_ok) return out;  // nothing to link for this GPU either
  const std::string lead = "the device-linked code has nothing for " + device.dotted() +
                           ", so the runtime links __nv_relfatbin's relocatable images for it when the module loads";
  out.relinked = true;
  if (bad == 0 && every_kernel_sourced) {
    out.verdict = {worst_ok->outcome, worst_ok->decided_by, lead + ": " + worst_ok->detail, worst_ok->decided_by_sass};
    return out;
  }
  out.running = worst_ok;
  out.verdict = {Outcome::partial, worst_ok->decided_by,
                 lead + ", but " +
                     (bad ? std::to_string(bad) + " of the " + std::to_string(sources.size()) +
                                " relocatable modules its kernels come from have no code for it"
                          : std::string("some of its kernels come from no relocatable module")) +
                     ": a launch of those kernels fails; the others: " + worst_ok->detail,
                 worst_ok->decided_by_sass};
  return out;
}

}  // namespace

ModuleVerdict judge_module(const Module& module, const std::vector<Module>& modules, ComputeCapability device,
                           const DriverFacts& facts) {
  std::vector<const Module*> relocatable;
  for (const Module& m : modules)
    if (!m.loadable()) relocatable.push_back(&m);
  return judge_module_in(module, relocatable, device.base(), facts);
}

namespace {

// No module holds a kernel: nothing of the file's own can be launched.
// Its kernels, if any, are images it loads itself, or another library's.
void judge_without_kernels(const FileReport& file, ComputeCapability device, const DriverFacts& facts,
                           FileVerdict& out) {
  const RuntimeCode& rt = file.runtime_code;
  out.runtime_kernels = rt.any();
  if (rt.containers > 0) {
    Verdict v = judge(rt.sass, rt.ptx, device, facts);
    std::string in;
    for (const auto& name : rt.sections) in += (in.empty() ? "" : ", ") + name;
    v.detail = "kernels come from " + std::to_string(rt.containers) + " fatbin images in " + in +
               " that the library loads itself (the registered module holds no kernel): " + v.detail;
    out.verdict = std::move(v);
    return;
  }
  std::string cuda_libs;
  for (const auto& lib : file.needed)
    if (lib.starts_with("libcu") || lib.starts_with("libnv")) cuda_libs += (cuda_libs.empty() ? "" : ", ") + lib;
  out.verdict = {Outcome::no_kernels, std::nullopt,
                 "no module holds a kernel entry point: nothing of its own to launch" +
                     (cuda_libs.empty() ? std::string() : "; kernels come from what it loads (" + cuda_libs + ")")};
}

// The modules that hold kernels (`deciding`), each judged on its own.
void judge_kernel_modules(const FileReport& file, const std::vector<std::size_t>& deciding, ComputeCapability device,
                          const DriverFacts& facts, FileVerdict& out) {
  std::vector<const Module*> relocatable;
  for (const Module& m : file.modules)
    if (!m.loadable()) relocatable.push_back(&m);

  // The worst module that runs, and the first that does not (fully).
  std::optional<Verdict> worst_running, first_failing;
  std::optional<std::size_t> running_at, failing_at;
  std::size_t failing = 0;
  for (const std::size_t i : deciding) {
    const ModuleVerdict mv = judge_module_in(file.modules[i], relocatable, device, facts);
    out.relinked = out.relinked || mv.relinked;
    if (mv.verdict.outcome == Outcome::none || mv.verdict.outcome == Outcome::partial) {
      ++failing;
      if (!first_failing) first_failing = mv.verdict, failing_at = i;
      if (mv.verdict.outcome == Outcome::partial && mv.running &&
          (!worst_running || rank(mv.running->outcome) < rank(worst_running->outcome)))
        worst_running = *mv.running, running_at = i;
    } else if (!worst_running || rank(mv.verdict.outcome) < rank(worst_running->outcome)) {
      worst_running = mv.verdict;
      running_at = i;
    }
  }
  if (!first_failing) {
    out.verdict = std::move(*worst_running);
    out.module = running_at;
  } else if (!worst_running) {
    out.verdict = std::move(*first_failing);
    out.module = failing_at;
  } else if (failing == 1 && deciding.size() == 1) {
    out.verdict = std::move(*first_failing);  // one module, partial within itself
    out.module = failing_at;
    out.partial_modules = 1;
  } else {
    // Some kernels have code for this GPU and some do not: a launch of one
    // of the latter fails, the rest run. Libraries that pick kernels per
    // architecture (cuBLAS holds modules of sm_75 SASS alone) are built so;
    // a program whose every kernel must run here is not.
    const Module& bad = file.modules[*failing_at];
    std::string archs;
    for (const auto& cc : bad.sass) archs += (archs.empty() ? "" : " ") + cc.sm();
    for (const auto& p : bad.ptx_archs()) archs += (archs.empty() ? "" : " ") + p.compute();
    out.verdict = {Outcome::partial, worst_running->decided_by,
                   std::to_string(failing) + " of " + std::to_string(deciding.size()) +
                       " kernel modules have no code for " + device.dotted() + " (the first at " + hex(bad.offset) +
                       ": " + (archs.empty() ? std::string("no images") : archs) +
                       "): a launch of their kernels here fails with \"no kernel image is available\" (209), "
                       "which matters only if the program launches them on this GPU; the others: " +
                       worst_running->detail,
                   worst_running->decided_by_sass};
    out.module = failing_at;
    out.partial_modules = failing;
  }
}

// Kernels the file builds or loads at run time: the verdict speaks for the
// registered modules only.
void note_runtime_code(const FileReport& file, ComputeCapability device, const DriverFacts& facts, FileVerdict& out) {
  if (!file.runtime_code.any()) return;
  const RuntimeCode& rt = file.runtime_code;
  std::string how;
  for (const auto& b : rt.builders) how += (how.empty() ? "" : ", ") + b;
  if (rt.containers) how += (how.empty() ? "" : ", ") + std::to_string(rt.containers) + " images outside .nv_fatbin";
  out.verdict.detail +=
      "; kernels also built or loaded at run time (" + how + "): this verdict covers only the registered modules";
  // A `none` or `partial` is no proof of failure only where the images the
  // library loads itself have code for the GPU; a builder alone (an
  // application that compiles a few kernels with NVRTC) does not excuse
  // registered kernels that cannot run.
  out.runtime_kernels = rt.containers > 0 && judge(rt.sass, rt.ptx, device, facts).outcome != Outcome::none;
}

// Which module decided, where the file holds several.
void name_the_module(const FileReport& file, bool any_relocatable, FileVerdict& out) {
  std::size_t loadable = 0;
  for (const Module& m : file.modules) loadable += m.loadable() ? 1 : 0;
  if ((loadable > 1 || any_relocatable) && out.module && out.verdict.outcome != Outcome::partial) {
    std::size_t ordinal = 0;
    for (std::size_t i = 0; i <= *out.module; ++i) ordinal += file.modules[i].loadable() ? 1 : 0;
    const Module& m = file.modules[*out.module];
    out.verdict.detail = "module " + std::to_string(ordinal) + " of " + std::to_string(loadable) +
                         (m.section == CodeSection::executable ? " in .nv_fatbin" : "") + " (at " + hex(m.offset) +
                         "): " + out.verdict.detail;
  } else if (out.verdict.outcome == Outcome::partial && loadable > 1) {
    out.verdict.detail = std::to_string(loadable) + " loadable modules: " + out.verdict.detail;
  }
}

}  // namespace

FileVerdict judge_file(const FileReport& file, ComputeCapability device, const DriverFacts& facts) {
  device = device.base();
  FileVerdict out;
  // A report made without the module walk (from sets alone) is judged by them.
  if (file.modules.empty()) {
    out.verdict = judge(file.sass, file.ptx, device, facts);
    return out;
  }
  const bool any_loadable = std::ranges::any_of(file.modules, &Module::loadable);
  const bool any_relocatable = std::ranges::any_of(file.modules, [](const Module& m) { return !m.loadable(); });

  // A .o or .a member: relocatable code waits for the device link; whole-
  // program code in its .nv_fatbin is loaded as is once linked into a host.
  if (file.object && any_relocatable) {
    out.verdict = needs_link(file, device, facts);
    return out;
  }
  if (!any_loadable) {
    if (any_relocatable) {
      out.verdict = {Outcome::none, std::nullopt,
                     "only relocatable device code (__nv_relfatbin) and no device-linked module for the runtime to "
                     "register: it was not device-linked (nvcc -dlink, or -rdc=true at the link)"};
    } else {
      out.verdict = judge({}, std::vector<PtxImage>{}, device, facts);
    }
    return out;
  }

  // The CUDA runtime checks the driver before it registers any module.
  if (file.runtime && facts.driver && facts.driver_for_runtime) {
    if (const auto floor = facts.driver_for_runtime(file.runtime->major); floor && *facts.driver < *floor) {
      out.verdict = {Outcome::none, std::nullopt,
                     "the CUDA " + std::to_string(file.runtime->major) + " runtime (" + file.runtime->from +
                         ") needs driver >= " + floor->str() + ", the driver is " + facts.driver->str() +
                         ": cudaErrorInsufficientDriver (35) before any kernel runs"};
      return out;
    }
  }

  std::vector<std::size_t> deciding;
  for (std::size_t i = 0; i < file.modules.size(); ++i)
    if (file.modules[i].loadable() && file.modules[i].kernels != Kernels::no) deciding.push_back(i);
  out.kernel_modules = deciding.size();
  if (deciding.empty()) {
    judge_without_kernels(file, device, facts, out);
    return out;
  }
  judge_kernel_modules(file, deciding, device, facts, out);
  note_runtime_code(file, device, facts, out);
  name_the_module(file, any_relocatable, out);
  return out;
}

}  // namespace orc::inspect
