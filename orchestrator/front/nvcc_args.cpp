#include "orchestrator/front/nvcc_args.hpp"

#include <algorithm>
#include <array>

namespace orc::front {

namespace {

using arch::ComputeCapability;

constexpr std::array<std::string_view, 4> k_arch_names = {"-arch", "--gpu-architecture", "-gpu-architecture", "--arch"};
constexpr std::array<std::string_view, 4> k_code_names = {"-code", "--gpu-code", "-gpu-code", "--code"};
constexpr std::array<std::string_view, 4> k_gencode_names = {"-gencode", "--generate-code", "-generate-code",
                                                             "--gencode"};
constexpr std::array<std::string_view, 4> k_output_names = {"-o", "--output-file", "-output-file", "-odir"};
constexpr std::array<std::string_view, 4> k_optf_names = {"-optf", "--options-file", "-options-file", "--optf"};
constexpr std::array<std::string_view, 4> k_language_names = {"-x", "--x", "-x-language", "--x-language"};

// Options that take a value and are not arch options: their value must not
// be read as an input file ("-MF deps.d", "-include pch.h").
constexpr std::array<std::string_view, 24> k_valued = {"-I",
                                                       "-L",
                                                       "-l",
                                                       "-D",
                                                       "-U",
                                                       "-include",
                                                       "-isystem",
                                                       "-Xcompiler",
                                                       "-Xlinker",
                                                       "-Xptxas",
                                                       "-Xnvlink",
                                                       "-Xarchive",
                                                       "-Xcudafe",
                                                       "-ccbin",
                                                       "--compiler-bindir",
                                                       "-MF",
                                                       "-MT",
                                                       "-MQ",
                                                       "-maxrregcount",
                                                       "-t",
                                                       "--threads",
                                                       "-std",
                                                       "-rdc",
                                                       "-idirafter"};

template <std::size_t N>
bool is_one_of(std::string_view a, const std::array<std::string_view, N>& names) {
  return std::ranges::find(names, a) != names.end();
}

// "-arch=sm_80" -> "sm_80" when `a` is one of `names` with '='; "-arch" -> ""
// (the value follows); nullopt when `a` is none of them.
template <std::size_t N>
std::optional<std::string_view> option_value(std::string_view a, const std::array<std::string_view, N>& names) {
  for (std::string_view n : names) {
    if (a == n) return std::string_view();
    if (a.size() > n.size() + 1 && a.starts_with(n) && a[n.size()] == '=') return a.substr(n.size() + 1);
  }
  return std::nullopt;
}

std::string_view extension(std::string_view file) {
  const auto slash = file.rfind('/');
  const auto dot = file.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  return file.substr(dot);
}

bool is_cuda_source(std::string_view e) { return e == ".cu" || e == ".cup"; }
bool is_host_source(std::string_view e) {
  return e == ".c" || e == ".cc" || e == ".cpp" || e == ".cxx" || e == ".C" || e == ".c++";
}
bool is_object(std::string_view e) {
  return e == ".o" || e == ".obj" || e == ".a" || e == ".so" || e == ".lib" || e == ".cubin" || e == ".fatbin" ||
         e == ".ptx" || e == ".ltoir";
}

// "sm_80" / "compute_90a" / "lto_90" into `t`; false when it is none.
bool add_code(std::string_view code, Targets& t) {
  auto cc = ComputeCapability::parse(code);
  if (!cc) return false;
  if (code.starts_with("sm_"))
    t.code.sass.insert(*cc);
  else if (code.starts_with("compute_"))
    t.code.ptx.insert(*cc);
  else if (code.starts_with("lto_"))
    t.lto.insert(*cc);
  else
    return false;
  return true;
}

std::vector<std::string_view> comma_list(std::string_view v) {
  std::vector<std::string_view> out;
  while (!v.empty()) {
    const auto comma = v.find(',');
    std::string_view piece = v.substr(0, comma);
    while (!piece.empty() && (piece.front() == '[' || piece.front() == '"' || piece.front() == '\''))
      piece.remove_prefix(1);
    while (!piece.empty() && (piece.back() == ']' || piece.back() == '"' || piece.back() == '\''))
      piece.remove_suffix(1);
    if (!piece.empty()) out.push_back(piece);
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  return out;
}

// "arch=compute_80,code=[sm_80,compute_80]": the code list follows
// "code=" to the end; "arch=" is what it is compiled from.
void read_gencode(std::string_view v, NvccCall& call) {
  while (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '"' || v.back() == '\'')) v.remove_suffix(1);
  const auto code_at = v.find("code=");
  std::string_view arch_part = v.substr(0, code_at);
  if (arch_part.starts_with("arch=")) arch_part.remove_prefix(5);
  while (!arch_part.empty() && arch_part.back() == ',') arch_part.remove_suffix(1);
  const std::string_view code_part = code_at == std::string_view::npos ? arch_part : v.substr(code_at + 5);
  for (std::string_view code : comma_list(code_part))
    if (!add_code(code, call.targets)) call.problems.push_back(std::string(code));
}

struct ArchOptions {
  std::optional<std::string> arch;
  std::vector<std::string> codes;
  bool gencode = false;
};

void resolve_targets(const ArchOptions& o, NvccCall& call) {
  if (o.arch) {
    const std::string& a = *o.arch;
    if (a == "native" || a == "all" || a == "all-major") {
      call.choice = a == "native" ? ArchChoice::native : a == "all" ? ArchChoice::all : ArchChoice::all_major;
      return;
    }
    auto cc = ComputeCapability::parse(a);
    if (!cc || !(a.starts_with("sm_") || a.starts_with("compute_") || a.starts_with("lto_"))) {
      call.problems.push_back(a);
    } else if (!o.codes.empty()) {
      for (const auto& c : o.codes)
        for (std::string_view code : comma_list(c))
          if (!add_code(code, call.targets)) call.problems.push_back(std::string(code));
    } else {
      // -arch=sm_XY alone is SASS and PTX of XY; -arch=compute_XY PTX only.
      // An arch- or family-specific one (sm_90a, compute_100f) also embeds
      // the plain compute_XY PTX (nvcc 12.4 and 13.0 --dryrun).
      if (a.starts_with("sm_")) call.targets.code.sass.insert(*cc);
      call.targets.code.ptx.insert(*cc);
      if (cc->variant() != arch::Variant::none) call.targets.code.ptx.insert(cc->base());
    }
  }
  call.choice = (o.arch || o.gencode) ? ArchChoice::listed : ArchChoice::nvcc_default;
}

}  // namespace

std::string_view arch_choice_name(ArchChoice c) {
  switch (c) {
    case ArchChoice::listed:
      return "listed";
    case ArchChoice::nvcc_default:
      return "nvcc-default";
    case ArchChoice::native:
      return "native";
    case ArchChoice::all:
      return "all";
    case ArchChoice::all_major:
      return "all-major";
  }
  return "listed";
}

std::string_view call_kind_name(CallKind k) {
  switch (k) {
    case CallKind::compile:
      return "compile";
    case CallKind::device_link:
      return "device-link";
    case CallKind::link:
      return "link";
    case CallKind::single_target:
      return "single-target";
    case CallKind::host_only:
      return "host-only";
    case CallKind::preprocess:
      return "preprocess";
    case CallKind::query:
      return "query";
  }
  return "query";
}

std::vector<std::string> split_flags(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < text.size())
        cur += text[++i];
      else
        cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(cur));
  return out;
}

std::vector<std::string> expand_options_files(std::span<const std::string> args, OptionsFileReader reader) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto v = option_value(args[i], k_optf_names);
    if (!v) {
      out.push_back(args[i]);
      continue;
    }
    std::string files = v->empty() && i + 1 < args.size() ? args[i + 1] : std::string(*v);
    const bool separate = v->empty() && i + 1 < args.size();
    std::vector<std::string> spliced;
    bool all_read = true;
    for (std::string_view f : comma_list(files)) {
      auto text = reader(std::string(f));
      if (!text) {
        all_read = false;
        break;
      }
      for (auto& a : split_flags(*text)) spliced.push_back(std::move(a));
    }
    if (all_read) {
      out.insert(out.end(), spliced.begin(), spliced.end());
    } else {
      out.push_back(args[i]);
      if (separate) out.push_back(args[i + 1]);
    }
    if (separate) ++i;
  }
  return out;
}

NvccCall read_nvcc_call(std::span<const std::string> args) {
  NvccCall call;
  ArchOptions arch;
  bool compile_only = false, dlink = false, single = false, preprocess = false, query = false, lang_cu = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto take = [&](std::optional<std::string_view> v) -> std::optional<std::string> {
      if (!v) return std::nullopt;
      if (!v->empty()) return std::string(*v);
      if (i + 1 < args.size()) return args[++i];
      return std::string();
    };
    if (auto v = take(option_value(a, k_arch_names))) {
      call.arch_flags.push_back(a.find('=') != std::string::npos ? a : a + " " + *v);
      arch.arch = *v;
    } else if (auto c = take(option_value(a, k_code_names))) {
      call.arch_flags.push_back(a.find('=') != std::string::npos ? a : a + " " + *c);
      arch.codes.push_back(*c);
    } else if (auto g = take(option_value(a, k_gencode_names))) {
      call.arch_flags.push_back(a.find('=') != std::string::npos ? a : a + " " + *g);
      arch.gencode = true;
      read_gencode(*g, call);
    } else if (auto o = take(option_value(a, k_output_names))) {
      call.output = *o;
    } else if (auto x = take(option_value(a, k_language_names))) {
      lang_cu = *x == "cu";
    } else if (is_one_of(a, k_valued)) {
      ++i;  // its value is no input
    } else if (a == "-c" || a == "--compile" || a == "-dc" || a == "--device-c" || a == "-dw" || a == "--device-w") {
      compile_only = true;
    } else if (a == "-dlink" || a == "--device-link") {
      dlink = true;
    } else if (a == "-ptx" || a == "--ptx" || a == "-cubin" || a == "--cubin" || a == "-optix-ir" ||
               a == "--optix-ir") {
      single = true;
    } else if (a == "-E" || a == "--preprocess" || a == "-M" || a == "-MM" || a == "--generate-dependencies" ||
               a == "--generate-nonsystem-dependencies") {
      preprocess = true;
    } else if (a == "--version" || a == "-V" || a == "--help" || a == "-h" || a == "--dryrun" || a == "-dryrun" ||
               a == "--list-gpu-arch" || a == "-arch-ls" || a == "--list-gpu-code" || a == "-code-ls") {
      query = true;
    } else if (!a.empty() && a.front() != '-') {
      const std::string_view e = extension(a);
      if (is_cuda_source(e) || (lang_cu && is_host_source(e))) {
        call.sources.push_back(a);
        call.inputs.push_back(a);
      } else if (is_host_source(e) || is_object(e)) {
        call.inputs.push_back(a);
      }
    }
  }
  resolve_targets(arch, call);
  const bool objects_only = call.sources.empty() && std::ranges::any_of(call.inputs, [](const std::string& f) {
                              return is_object(extension(f));
                            });
  if (query)
    call.kind = CallKind::query;
  else if (preprocess)
    call.kind = CallKind::preprocess;
  else if (single)
    call.kind = CallKind::single_target;
  else if (dlink)
    call.kind = CallKind::device_link;
  else if (!call.sources.empty())
    call.kind = CallKind::compile;
  else if (objects_only && !compile_only)
    call.kind = CallKind::link;
  else if (!call.inputs.empty())
    call.kind = CallKind::host_only;
  else
    call.kind = CallKind::query;
  return call;
}

std::vector<std::string> strip_arch_options(std::span<const std::string> args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::optional<std::string_view> v = option_value(a, k_arch_names);
    if (!v) v = option_value(a, k_code_names);
    if (!v) v = option_value(a, k_gencode_names);
    if (!v) {
      out.push_back(a);
      continue;
    }
    if (v->empty()) ++i;  // and its separate value
  }
  return out;
}

Targets default_targets(ComputeCapability default_arch) {
  Targets t;
  t.code.sass.insert(default_arch);
  t.code.ptx.insert(default_arch);
  return t;
}

std::optional<Targets> targets_from_dryrun(std::string_view text) {
  // 12.x/13.x: "--image3=kind=elf,sm=80,file=..." (kind elf, ptx, or
  // nvvm for LTO-IR); 11.x: "--image=profile=sm_80,file=..." or
  // "profile=compute_80".
  Targets t;
  bool any = false;
  std::size_t at = 0;
  while ((at = text.find("--image3=kind=", at)) != std::string_view::npos) {
    at += 14;
    const std::string_view rest = text.substr(at, 64);
    const auto comma = rest.find(",sm=");
    if (comma == std::string_view::npos) continue;
    const std::string_view kind = rest.substr(0, comma);
    std::string_view sm = rest.substr(comma + 4);
    sm = sm.substr(0, sm.find_first_of(", \"'"));
    auto cc = ComputeCapability::parse(sm);
    if (!cc) continue;
    any = true;
    if (kind == "elf")
      t.code.sass.insert(*cc);
    else if (kind == "ptx")
      t.code.ptx.insert(*cc);
    else
      t.lto.insert(*cc);
  }
  at = 0;
  while ((at = text.find("--image=profile=", at)) != std::string_view::npos) {
    at += 16;
    std::string_view p = text.substr(at, 64);
    p = p.substr(0, p.find_first_of(", \"'"));
    if (add_code(p, t)) any = true;
  }
  if (!any) return std::nullopt;
  return t;
}

std::string describe(const Targets& t) {
  std::string out;
  const auto put = [&out](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  for (const auto& cc : t.code.sass) put(cc.sm());
  for (const auto& cc : t.code.ptx) put(cc.compute());
  for (const auto& cc : t.lto) put(cc.lto());
  return out.empty() ? "nothing" : out;
}

}  // namespace orc::front
