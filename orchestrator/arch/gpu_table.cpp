// The GPU table (gpu_db.hpp): every product of cuda-compat.md section 1.1,
// and every physical GPU name of NVIDIA's driver name table, with the names
// tools print for Jetson and pre-Turing boards (issue 13).
//
// Sources of the rows added for issue 13:
// - NVIDIA/open-gpu-kernel-modules src/nvidia/generated/g_nv_name_released.h
//   (595.45.04, 2026-03-05): the table the driver names each PCI device ID
//   from, hence what nvidia-smi, NVML, cudaDeviceProp::name (torch, TF) and
//   GPU Feature Discovery's label print, Turing and later. A row's CC is its
//   chip family's (pci.ids gives the chip: TU1xx 7.5, GA100 8.0, GA10x 8.6,
//   AD10x 8.9, GH100 9.0, GB20x 12.0), the families of cuda-compat.md 1.1.
//   The driver's "NVIDIA " prefix is dropped from the canonical name.
// - Jetson and Tegra names as CUDA and nvidia-smi print them ("Orin",
//   "Orin (nvgpu)", "NVIDIA Thor", "Xavier", "NVIDIA Tegra X1/X2", "GP10B"),
//   and pre-Turing boards seen printed with their CC (deviceQuery, TF logs,
//   PyTorch's "with CUDA capability sm_XY" warning); the threads are cited
//   in tests/unit/arch/gpu_names_test.cpp.
// Left out: names the driver gives two chips of different CCs ("GeForce
// GT 640", "GeForce GT 730": Fermi and Kepler boards), the Turing cloud
// board the driver also calls "GeForce GTX 1060" (the Pascal card keeps that
// name), and "DRIVE P2021" (no CC stated anywhere).
#include <array>

#include "orchestrator/arch/gpu_db.hpp"

namespace orc::arch {

namespace {

// Architecture names, spelled once so every row of a generation agrees and
// architecture_of() can answer from the table alone.
constexpr std::string_view k_kepler = "Kepler";
constexpr std::string_view k_maxwell = "Maxwell";
constexpr std::string_view k_pascal = "Pascal";
constexpr std::string_view k_volta = "Volta";
constexpr std::string_view k_turing = "Turing";
constexpr std::string_view k_ampere = "Ampere";
constexpr std::string_view k_ada = "Ada Lovelace";
constexpr std::string_view k_hopper = "Hopper";
constexpr std::string_view k_blackwell = "Blackwell";
constexpr std::string_view k_blackwell_ultra = "Blackwell Ultra";
constexpr std::string_view k_rubin = "Rubin";

constexpr Segment k_dc = Segment::datacenter;
constexpr Segment k_geforce = Segment::geforce;
constexpr Segment k_ws = Segment::workstation;
constexpr Segment k_jetson = Segment::jetson;

// Every product of cuda-compat.md section 1.1, row by row. The reference's
// shorthand ("GTX 680/690/770", "RTX 30xx", "Quadro P-series") is spelled
// out, because lookup and did-you-mean only see whole product names.
// Canonical names follow NVIDIA's branding (and what nvidia-smi prints where
// that differs only by vendor or memory words, which lookup drops anyway).
// CC 8.8 has no confirmed product and CC 10.1 is Thor's pre-13.0 number (the
// same silicon is 11.0 now), so neither has a row.
constexpr auto k_gpus = std::to_array<Gpu>({
    // 3.0: Kepler GK104/GK107.
    {"Tesla K10", {3, 0}, k_dc, k_kepler},
    {"GeForce GTX 680", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 690", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 770", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 760", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 660", {3, 0}, k_geforce, k_kepler},
    {"Quadro K5000", {3, 0}, k_ws, k_kepler},
    {"Quadro K4200", {3, 0}, k_ws, k_kepler},
    {"Quadro K4000", {3, 0}, k_ws, k_kepler},
    {"Quadro K2000", {3, 0}, k_ws, k_kepler},
    {"Quadro K600", {3, 0}, k_ws, k_kepler},
    {"Quadro K420", {3, 0}, k_ws, k_kepler},
    {"GeForce GT 750M", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 650 Ti", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 770M", {3, 0}, k_geforce, k_kepler},
    // 3.2: Kepler GK20A (Tegra K1).
    {"Jetson TK1", {3, 2}, k_jetson, k_kepler},
    // 3.5: Kepler GK110/GK208.
    {"Tesla K20", {3, 5}, k_dc, k_kepler},
    {"Tesla K40", {3, 5}, k_dc, k_kepler},
    {"GeForce GTX 780", {3, 5}, k_geforce, k_kepler},
    {"GeForce GTX 780 Ti", {3, 5}, k_geforce, k_kepler},
    {"GeForce GTX TITAN", {3, 5}, k_geforce, k_kepler},
    {"GeForce GTX TITAN Black", {3, 5}, k_geforce, k_kepler},
    {"GeForce GTX TITAN Z", {3, 5}, k_geforce, k_kepler},
    {"Quadro K6000", {3, 5}, k_ws, k_kepler},
    {"Quadro K5200", {3, 5}, k_ws, k_kepler},
    // 3.7: Kepler GK210.
    {"Tesla K80", {3, 7}, k_dc, k_kepler},
    // 5.0: Maxwell GM107/GM108. The reference's "Quadro M-series mobile" names
    // no model, so it has no row.
    {"GeForce GTX 750", {5, 0}, k_geforce, k_maxwell},
    {"GeForce GTX 750 Ti", {5, 0}, k_geforce, k_maxwell},
    {"GeForce GTX 960M", {5, 0}, k_geforce, k_maxwell},
    {"GeForce GTX 950M", {5, 0}, k_geforce, k_maxwell},
    {"GeForce 940M", {5, 0}, k_geforce, k_maxwell},
    {"Quadro K2200", {5, 0}, k_ws, k_maxwell},
    {"Quadro K1200", {5, 0}, k_ws, k_maxwell},
    {"Quadro K620", {5, 0}, k_ws, k_maxwell},
    {"Quadro M1000M", {5, 0}, k_ws, k_maxwell},
    // 5.2: Maxwell GM20x.
    {"Tesla M40", {5, 2}, k_dc, k_maxwell},
    {"Tesla M60", {5, 2}, k_dc, k_maxwell},
    {"GeForce GTX 980 Ti", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX 980", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX 970", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX 960", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX 950", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX TITAN X", {5, 2}, k_geforce, k_maxwell},
    {"Quadro M6000", {5, 2}, k_ws, k_maxwell},
    {"Quadro M5000", {5, 2}, k_ws, k_maxwell},
    {"Quadro M4000", {5, 2}, k_ws, k_maxwell},
    {"Quadro M2000", {5, 2}, k_ws, k_maxwell},
    // 5.3: Maxwell Tegra X1.
    {"Jetson Nano", {5, 3}, k_jetson, k_maxwell},
    {"Jetson TX1", {5, 3}, k_jetson, k_maxwell},
    {"Tegra X1", {5, 3}, k_jetson, k_maxwell},
    // 6.0: Pascal GP100.
    {"Tesla P100", {6, 0}, k_dc, k_pascal},
    {"Quadro GP100", {6, 0}, k_ws, k_pascal},
    // 6.1: Pascal GP10x. "Quadro P-series" is spelled out as its GP10x models.
    {"Tesla P40", {6, 1}, k_dc, k_pascal},
    {"Tesla P4", {6, 1}, k_dc, k_pascal},
    {"GeForce GTX 1080 Ti", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1080", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1070 Ti", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1070", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1060", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1050", {6, 1}, k_geforce, k_pascal},
    // nvidia-smi's spellings; "GTX TITAN X" above is the Maxwell card.
    {"TITAN X (Pascal)", {6, 1}, k_geforce, k_pascal},
    {"TITAN Xp", {6, 1}, k_geforce, k_pascal},
    {"Quadro P6000", {6, 1}, k_ws, k_pascal},
    {"Quadro P5000", {6, 1}, k_ws, k_pascal},
    {"Quadro P4000", {6, 1}, k_ws, k_pascal},
    {"Quadro P2200", {6, 1}, k_ws, k_pascal},
    {"Quadro P2000", {6, 1}, k_ws, k_pascal},
    {"Quadro P1000", {6, 1}, k_ws, k_pascal},
    {"Quadro P620", {6, 1}, k_ws, k_pascal},
    {"Quadro P600", {6, 1}, k_ws, k_pascal},
    {"Quadro P400", {6, 1}, k_ws, k_pascal},
    {"GeForce GTX 1050 Ti", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1060 with Max-Q Design", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1070 with Max-Q Design", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1080 with Max-Q Design", {6, 1}, k_geforce, k_pascal},
    {"P106-090", {6, 1}, k_geforce, k_pascal},
    {"P106-100", {6, 1}, k_geforce, k_pascal},
    // 6.2: Pascal Tegra X2.
    {"Jetson TX2", {6, 2}, k_jetson, k_pascal},
    {"GP10B", {6, 2}, k_jetson, k_pascal},
    {"Tegra X2", {6, 2}, k_jetson, k_pascal},
    // 7.0: Volta GV100.
    {"Tesla V100", {7, 0}, k_dc, k_volta},
    {"TITAN V", {7, 0}, k_geforce, k_volta},
    {"Quadro GV100", {7, 0}, k_ws, k_volta},
    {"Tesla PG500-216", {7, 0}, k_dc, k_volta},
    {"Tesla V100S", {7, 0}, k_dc, k_volta},
    // 7.2: Volta Xavier.
    {"Jetson AGX Xavier", {7, 2}, k_jetson, k_volta},
    {"Jetson Xavier NX", {7, 2}, k_jetson, k_volta},
    {"Xavier", {7, 2}, k_jetson, k_volta},
    // 7.5: Turing. "Quadro RTX 6000" normalizes to "rtx6000", distinct from
    // "RTX 6000 Ada", "RTX A6000" and "RTX PRO 6000 Blackwell".
    {"Tesla T4", {7, 5}, k_dc, k_turing},
    {"GeForce RTX 2060", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2060 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2070", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2070 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2080", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2080 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2080 Ti", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1650", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1650 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1660", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1660 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1660 Ti", {7, 5}, k_geforce, k_turing},
    {"TITAN RTX", {7, 5}, k_geforce, k_turing},
    {"Quadro RTX 4000", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 5000", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 6000", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 8000", {7, 5}, k_ws, k_turing},
    {"T400", {7, 5}, k_ws, k_turing},
    {"T600", {7, 5}, k_ws, k_turing},
    {"T1000", {7, 5}, k_ws, k_turing},
    {"CMP 30HX", {7, 5}, k_geforce, k_turing},
    {"CMP 40HX", {7, 5}, k_geforce, k_turing},
    {"CMP 50HX", {7, 5}, k_geforce, k_turing},
    {"DGX Display", {7, 5}, k_ws, k_turing},
    {"GeForce GTX 1630", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1650 Ti", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1650 Ti with Max-Q Design", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1650 with Max-Q Design", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1660 Ti with Max-Q Design", {7, 5}, k_geforce, k_turing},
    {"GeForce MX450", {7, 5}, k_geforce, k_turing},
    {"GeForce MX550", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2060 with Max-Q Design", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2070 Super with Max-Q Design", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2070 with Max-Q Design", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2080 Super with Max-Q Design", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2080 with Max-Q Design", {7, 5}, k_geforce, k_turing},
    {"Quadro RTX 3000", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 3000 with Max-Q Design", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 4000 with Max-Q Design", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 5000 with Max-Q Design", {7, 5}, k_ws, k_turing},
    {"Quadro T1000 with Max-Q Design", {7, 5}, k_ws, k_turing},
    {"Quadro T2000", {7, 5}, k_ws, k_turing},
    {"Quadro T2000 with Max-Q Design", {7, 5}, k_ws, k_turing},
    {"T1200 Laptop GPU", {7, 5}, k_ws, k_turing},
    {"T400E", {7, 5}, k_ws, k_turing},
    {"T500", {7, 5}, k_ws, k_turing},
    {"T550 Laptop GPU", {7, 5}, k_ws, k_turing},
    {"T600 Laptop GPU", {7, 5}, k_ws, k_turing},
    // 8.0: Ampere GA100.
    {"A100", {8, 0}, k_dc, k_ampere},
    {"A30", {8, 0}, k_dc, k_ampere},
    {"A100-PG509-200", {8, 0}, k_dc, k_ampere},
    {"A800 40GB Active", {8, 0}, k_dc, k_ampere},
    {"AX800", {8, 0}, k_dc, k_ampere},
    {"PG506-232", {8, 0}, k_dc, k_ampere},
    {"PG509-210", {8, 0}, k_dc, k_ampere},
    // 8.6: Ampere GA10x.
    {"A40", {8, 6}, k_dc, k_ampere},
    {"A10", {8, 6}, k_dc, k_ampere},
    {"A16", {8, 6}, k_dc, k_ampere},
    {"A2", {8, 6}, k_dc, k_ampere},
    {"GeForce RTX 3050", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3060", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3060 Ti", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3070", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3070 Ti", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3080", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3080 Ti", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3090", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3090 Ti", {8, 6}, k_geforce, k_ampere},
    {"RTX A6000", {8, 6}, k_ws, k_ampere},
    {"RTX A5000", {8, 6}, k_ws, k_ampere},
    {"RTX A4000", {8, 6}, k_ws, k_ampere},
    {"RTX A3000", {8, 6}, k_ws, k_ampere},
    {"RTX A2000", {8, 6}, k_ws, k_ampere},
    {"A10G", {8, 6}, k_dc, k_ampere},
    {"A10M", {8, 6}, k_dc, k_ampere},
    {"CMP 70HX", {8, 6}, k_geforce, k_ampere},
    {"CMP 90HX", {8, 6}, k_geforce, k_ampere},
    {"GeForce MX570", {8, 6}, k_geforce, k_ampere},
    {"GeForce MX570 A", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 2050", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3050 4GB Laptop GPU", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3050 OEM", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3050 Ti Laptop GPU", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3060 Laptop GPU", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3070 Laptop GPU", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3070 Ti Laptop GPU", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3080 Laptop GPU", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3080 Ti Laptop GPU", {8, 6}, k_geforce, k_ampere},
    {"RTX A1000", {8, 6}, k_ws, k_ampere},
    {"RTX A1000 6GB Laptop GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A1000 Embedded GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A2000 8GB Laptop GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A2000 Embedded GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A3000 12GB Laptop GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A400", {8, 6}, k_ws, k_ampere},
    {"RTX A4000 Laptop GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A4000H", {8, 6}, k_ws, k_ampere},
    {"RTX A4500", {8, 6}, k_ws, k_ampere},
    {"RTX A4500 Embedded GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A4500 Laptop GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A500 Embedded GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A500 Laptop GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A5000 Laptop GPU", {8, 6}, k_ws, k_ampere},
    {"RTX A5500", {8, 6}, k_ws, k_ampere},
    {"RTX A5500 Laptop GPU", {8, 6}, k_ws, k_ampere},
    // 8.7: Ampere Orin.
    {"Jetson AGX Orin", {8, 7}, k_jetson, k_ampere},
    {"Jetson Orin NX", {8, 7}, k_jetson, k_ampere},
    {"Jetson Orin Nano", {8, 7}, k_jetson, k_ampere},
    {"Orin", {8, 7}, k_jetson, k_ampere},
    // 8.9: Ada Lovelace.
    {"L4", {8, 9}, k_dc, k_ada},
    {"L40", {8, 9}, k_dc, k_ada},
    {"L40S", {8, 9}, k_dc, k_ada},
    {"GeForce RTX 4060", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4060 Ti", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070 SUPER", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070 Ti", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070 Ti SUPER", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4080", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4080 SUPER", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4090", {8, 9}, k_geforce, k_ada},
    {"RTX 6000 Ada", {8, 9}, k_ws, k_ada},
    {"RTX 5000 Ada", {8, 9}, k_ws, k_ada},
    {"RTX 4500 Ada", {8, 9}, k_ws, k_ada},
    {"RTX 4000 Ada", {8, 9}, k_ws, k_ada},
    {"RTX 2000 Ada", {8, 9}, k_ws, k_ada},
    {"GeForce RTX 3050 A Laptop GPU", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4050 Laptop GPU", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4060 Laptop GPU", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070 Laptop GPU", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4080 Laptop GPU", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4090 D", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4090 Laptop GPU", {8, 9}, k_geforce, k_ada},
    {"L2", {8, 9}, k_dc, k_ada},
    {"L20", {8, 9}, k_dc, k_ada},
    {"RTX 1000 Ada Generation Laptop GPU", {8, 9}, k_ws, k_ada},
    {"RTX 2000 Ada Generation Embedded GPU", {8, 9}, k_ws, k_ada},
    {"RTX 2000 Ada Generation Laptop GPU", {8, 9}, k_ws, k_ada},
    {"RTX 2000E Ada Generation", {8, 9}, k_ws, k_ada},
    {"RTX 3000 Ada Generation Laptop GPU", {8, 9}, k_ws, k_ada},
    {"RTX 3500 Ada Generation Embedded GPU", {8, 9}, k_ws, k_ada},
    {"RTX 3500 Ada Generation Laptop GPU", {8, 9}, k_ws, k_ada},
    {"RTX 4000 Ada Generation Laptop GPU", {8, 9}, k_ws, k_ada},
    {"RTX 4000 SFF Ada Generation", {8, 9}, k_ws, k_ada},
    {"RTX 500 Ada Generation Laptop GPU", {8, 9}, k_ws, k_ada},
    {"RTX 5000 Ada Generation Embedded GPU", {8, 9}, k_ws, k_ada},
    {"RTX 5000 Ada Generation Laptop GPU", {8, 9}, k_ws, k_ada},
    {"RTX 5880 Ada Generation", {8, 9}, k_ws, k_ada},
    // 9.0: Hopper (the H200 reports 9.0 on the device, cuda-compat.md [DEV]).
    {"H100", {9, 0}, k_dc, k_hopper},
    {"H200", {9, 0}, k_dc, k_hopper},
    {"GH200", {9, 0}, k_dc, k_hopper},
    {"H20", {9, 0}, k_dc, k_hopper},
    {"H20-3e", {9, 0}, k_dc, k_hopper},
    {"H800", {9, 0}, k_dc, k_hopper},
    // 10.0: Blackwell datacenter.
    {"B200", {10, 0}, k_dc, k_blackwell},
    {"GB200", {10, 0}, k_dc, k_blackwell},
    // 10.3: Blackwell Ultra.
    {"B300", {10, 3}, k_dc, k_blackwell_ultra},
    {"GB300", {10, 3}, k_dc, k_blackwell_ultra},
    // 10.7: Rubin; the reference writes "(Vera) Rubin", the GPU and its
    // Vera-CPU superchip, as it lists B200 and GB200 apart.
    {"Rubin", {10, 7}, k_dc, k_rubin},
    {"Vera Rubin", {10, 7}, k_dc, k_rubin},
    // 11.0: Blackwell Thor. CUDA 13.0 renumbered sm_101 to sm_110, so the
    // Thor parts the reference lists under 10.1 (old name) live here.
    {"Jetson AGX Thor", {11, 0}, k_jetson, k_blackwell},
    {"Jetson T5000", {11, 0}, k_jetson, k_blackwell},
    {"Jetson T4000", {11, 0}, k_jetson, k_blackwell},
    {"DRIVE Thor", {11, 0}, k_jetson, k_blackwell},
    {"Thor", {11, 0}, k_jetson, k_blackwell},
    // 12.0: Blackwell workstation/consumer, plus the RTX PRO server cards.
    {"RTX PRO 6000 Blackwell Server Edition", {12, 0}, k_dc, k_blackwell},
    {"RTX PRO 4500 Blackwell Server Edition", {12, 0}, k_dc, k_blackwell},
    {"GeForce RTX 5090", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5080", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5070 Ti", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5070", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5060 Ti", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5060", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5050", {12, 0}, k_geforce, k_blackwell},
    {"RTX PRO 6000 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 6000 Blackwell Max-Q", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 5000 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 4500 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 4000 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 4000 Blackwell SFF", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 2000 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"GeForce RTX 5050 Laptop GPU", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5060 Laptop GPU", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5070 Laptop GPU", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5070 Ti Laptop GPU", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5080 Laptop GPU", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5090 D", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5090 D v2", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5090 Laptop GPU", {12, 0}, k_geforce, k_blackwell},
    {"RTX 6000D", {12, 0}, k_dc, k_blackwell},
    {"RTX PRO 1000 Blackwell Generation Laptop GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 2000 Blackwell Embedded GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 2000 Blackwell Generation Laptop GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 3000 Blackwell Generation Laptop GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 4000 Blackwell Embedded GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 4000 Blackwell Generation Laptop GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 500 Blackwell Embedded GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 500 Blackwell Generation Laptop GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 5000 Blackwell Embedded GPU", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 5000 Blackwell Generation Laptop GPU", {12, 0}, k_ws, k_blackwell},
    // 12.1: Blackwell GB10 (DGX Spark); the reference files it as datacenter.
    {"GB10", {12, 1}, k_dc, k_blackwell},
});

}  // namespace

std::span<const Gpu> gpu_table() { return k_gpus; }

}  // namespace orc::arch
