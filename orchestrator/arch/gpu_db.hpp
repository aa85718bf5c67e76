#pragma once
// Product name -> compute capability, for every GPU in cuda-compat.md 1.1.
// Lookups ignore case, spaces, hyphens, vendor prefixes ("NVIDIA", "GeForce",
// "Tesla") and memory/form-factor suffixes ("80GB", "HBM3", "SXM4", "PCIe"),
// so "RTX 4090", "GeForce RTX 4090", "rtx4090" and nvidia-smi's
// "NVIDIA H100 80GB HBM3" all resolve.
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"

namespace orc::arch {

enum class Segment { datacenter, geforce, workstation, jetson };

struct Gpu {
  std::string_view name;          // canonical product name: "GeForce RTX 4090"
  ComputeCapability cc;           // 8.9
  Segment segment;                // Segment::geforce
  std::string_view architecture;  // "Ada Lovelace"
};

struct GpuLookupError {
  std::string message;     // "unknown GPU 'RTX 4909'"
  std::string suggestion;  // canonical name of the closest match, or empty
};

std::span<const Gpu> gpu_table();
std::expected<Gpu, GpuLookupError> find_gpu(std::string_view name);
// The GPUs `orchestrate gpus QUERY` lists when QUERY names no product: those
// of an architecture ("Blackwell" takes Blackwell Ultra too, "Ada" is Ada
// Lovelace), else those whose name holds the query's words in order, the
// last as a prefix ("RTX 50": the RTX 50 series and RTX 5000 Ada). Vendor
// words ("NVIDIA", "GeForce", ...) are ignored on both sides. Table order;
// empty when nothing matches.
std::vector<Gpu> search_gpus(std::string_view query);

// What a compute capability is (its base): the CC of a product (a table row,
// or a G80-to-Fermi GPU, 1.0-2.1, older than every toolkit here), one nvcc
// accepts that no confirmed product has (8.8; 10.1, CUDA 12.8-12.9's number
// for Thor), or none at all (7.1, 13.0). cuda-compat.md section 1.
enum class CcStanding { product, compiler_only, none };
CcStanding cc_standing(ComputeCapability cc);
// For a CC of no standing: the nearest CCs that have one, below and above
// within its major ("7.1": 7.0 and 7.2), else the nearest overall ("13.0": 12.1).
std::vector<ComputeCapability> nearest_ccs(ComputeCapability cc);
// The key lookups compare: lower case, separators and vendor/memory words
// removed ("nvidia h100 80gb hbm3" -> "h100").
std::string normalize_gpu_name(std::string_view name);
// "Ampere" for 8.0, "Hopper" for 9.0; empty for a CC no table row has.
std::string_view architecture_of(ComputeCapability cc);
std::string_view segment_name(Segment s);

}  // namespace orc::arch
