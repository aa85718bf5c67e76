// GPU names exactly as real tools print them, each with the compute
// capability of that product and where the string was seen (issue 13):
// nvidia-smi (table, -L, -q, --query-gpu=name), torch.cuda.get_device_name()
// and PyTorch's "<name> with CUDA capability sm_XY is not compatible"
// warning (which prints name and CC together), TensorFlow and deviceQuery
// logs, GPU Feature Discovery's nvidia.com/gpu.product label (spaces as
// dashes, "-SHARED" and "-MIG-<profile>" suffixes), NVML names in cloud
// catalogues, and vLLM's tuning-config file names (torch's name with spaces
// as underscores). Then every physical GPU name of NVIDIA's driver name
// table, the table the driver, hence all of those tools, takes the names from.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/gpu_db.hpp"

namespace orc::arch {
namespace {

struct Printed {
  std::string_view name;
  ComputeCapability cc;
  std::string_view source;  // where the string was seen printed
};

// 140 strings: GitHub issue and pull-request threads (nvidia-smi tables,
// collect_env reports, PyTorch warnings, deviceQuery and TF logs), Kubernetes
// label dumps, RunPod's GPU-type list (its IDs are NVML names), NVIDIA's
// pre-Turing "supported chips" list quoted in LibreELEC pull requests, and
// vLLM's config file names.
const std::vector<Printed>& printed_names() {
  static const std::vector<Printed> names = {
      {"Orin (nvgpu)", {8, 7}, "https://github.com/anduril/jetpack-nixos/pull/371"},
      {"Orin", {8, 7}, "https://github.com/tmcdonell/cuda/issues/77"},
      {"NVIDIA Thor", {11, 0}, "https://github.com/sgl-project/sglang/pull/11287"},
      {"NVIDIA GB10", {12, 1}, "https://github.com/snowflakedb/ArcticTraining/pull/345"},
      {"NVIDIA-GB10", {12, 1}, "https://github.com/leptonai/gpud/pull/1170"},
      {"GB10", {12, 1}, "https://github.com/XuehaiPan/nvitop/pull/208"},
      {"NVIDIA Tegra X1", {5, 3}, "https://github.com/Technica-Corporation/Tegra-Docker/issues/12"},
      {"NVIDIA Tegra X2", {6, 2}, "https://github.com/jkjung-avt/hand-detection-tutorial/issues/31"},
      {"GP10B", {6, 2}, "https://github.com/opencv/opencv/issues/8554"},
      {"Xavier", {7, 2}, "https://github.com/OE4T/meta-tegra/pull/1282"},
      {"NVIDIA H100 80GB HBM3", {9, 0}, "https://github.com/wilicc/gpu-burn/issues/114"},
      {"NVIDIA H100 NVL", {9, 0}, "https://github.com/fastfetch-cli/fastfetch/issues/1658"},
      {"NVIDIA H100", {9, 0}, "https://github.com/ogx-ai/ogx/issues/1798"},
      {"NVIDIA H20", {9, 0}, "https://github.com/vllm-project/vllm/issues/5001"},
      {"NVIDIA H800", {9, 0}, "https://github.com/AeroScripts/leapfusion-hunyuan-image2video/issues/12"},
      {"NVIDIA L20", {8, 9}, "https://github.com/vllm-project/vllm/issues/17462"},
      {"NVIDIA A100-PCIE-40GB", {8, 0}, "https://github.com/vllm-project/vllm/issues/10912"},
      {"A100-PCIE-40GB", {8, 0}, "https://github.com/NVIDIA/k8s-device-plugin/issues/253"},
      {"NVIDIA A100-SXM4-40GB", {8, 0}, "https://github.com/vllm-project/vllm/pull/18272"},
      {"NVIDIA A100 80GB PCIe", {8, 0}, "https://github.com/vectorch-ai/ScaleLLM/pull/288"},
      {"Tesla V100S-PCIE-32GB", {7, 0}, "https://github.com/vllm-project/vllm/issues/10147"},
      {"Tesla V100-SXM2-16GB", {7, 0}, "https://github.com/vllm-project/vllm/issues/18933"},
      {"Tesla V100-SXM2-32GB", {7, 0}, "https://github.com/ryujaehun/pytorch-gpu-benchmark/issues/32"},
      {"Tesla P100-PCIE-16GB", {6, 0}, "https://github.com/facebookresearch/PyTorch-BigGraph/issues/151"},
      {"Tesla K80", {3, 7}, "https://github.com/openmm/openmm/issues/2386"},
      {"GeForce GTX 1080 Ti", {6, 1}, "https://github.com/NVIDIA/nvidia-docker/issues/1004"},
      {"GeForce GTX 1080", {6, 1}, "https://github.com/NVIDIA/nvidia-docker/issues/954"},
      {"GeForce GTX 1650", {7, 5}, "https://github.com/NVIDIA/nvidia-docker/issues/1330"},
      {"GeForce GTX 1660 Ti", {7, 5}, "https://github.com/NVIDIA/nvidia-docker/issues/1485"},
      {"GeForce GTX 780", {3, 5}, "https://github.com/MatthiasSchinzel/sysmon/issues/12"},
      {"GeForce GTX 970", {5, 2}, "https://github.com/AlexeyAB/darknet/issues/3334"},
      {"GeForce GT 750M", {3, 0}, "https://github.com/pbhogale/gpu-keras-rstudio/issues/5"},
      {"GeForce GTX 960M", {5, 0}, "https://github.com/peterjc123/pytorch-scripts/issues/13"},
      {"NVIDIA GeForce RTX 3090", {8, 6}, "https://github.com/pytorch/pytorch/issues/75198"},
      {"NVIDIA GeForce RTX 3060", {8, 6}, "https://github.com/geerlingguy/raspberry-pi-pcie-devices/issues/790"},
      {"NVIDIA GeForce RTX 2080 Ti", {7, 5}, "https://github.com/weicj/2080Ti-LLM-Toolbox/issues/2"},
      {"NVIDIA TITAN RTX", {7, 5}, "https://github.com/weicj/2080Ti-LLM-Toolbox/issues/2"},
      {"Quadro RTX 4000", {7, 5}, "https://github.com/akash-network/provider-configs/pull/12"},
      {"NVIDIA GeForce RTX 5090", {12, 0}, "https://github.com/noonghunna/club-3090/issues/1261"},
      {"NVIDIA GeForce RTX 5090 D", {12, 0}, "https://github.com/pytorch/pytorch/issues/150733"},
      {"NVIDIA GeForce RTX 5080 Laptop GPU",
       {12, 0},
       "https://github.com/RetroUpgrade-YouTube/Hi3DGen_1Click_installer/issues/5"},
      {"NVIDIA GeForce RTX 5070 Laptop GPU", {12, 0}, "https://github.com/coendevente/SlicerNNInteractive/issues/58"},
      {"NVIDIA GeForce RTX 5070 Ti",
       {12, 0},
       "https://github.com/RVC-Project/Retrieval-based-Voice-Conversion-WebUI/issues/2636"},
      {"NVIDIA GeForce RTX 5060 Ti", {12, 0}, "https://github.com/lmoe/wyoming-xtts/issues/1"},
      {"NVIDIA B200", {10, 0}, "https://github.com/weecology/DeepForest/issues/1090"},
      {"NVIDIA GeForce RTX 3080 Laptop GPU", {8, 6}, "https://github.com/meituan/YOLOv6/issues/350"},
      {"NVIDIA RTX A5000", {8, 6}, "https://github.com/jackyjsy/CVPR21Chal-SLR/issues/20"},
      {"NVIDIA GeForce RTX 4070 Laptop GPU", {8, 9}, "https://github.com/vllm-project/vllm/pull/9293"},
      {"NVIDIA GeForce RTX 4090", {8, 9}, "https://github.com/vllm-project/vllm/issues/13497"},
      {"NVIDIA GeForce RTX 4090 D", {8, 9}, "https://github.com/zzc0721/torch-performance-test-data/issues/20"},
      {"NVIDIA B300 SXM6 AC", {10, 3}, "https://github.com/NVIDIA/cosmos-framework/pull/114"},
      {"NVIDIA-B300-SXM6-AC", {10, 3}, "https://github.com/NVIDIA/NVSentinel/pull/1658"},
      {"NVIDIA GH200 480GB", {9, 0}, "https://github.com/marin-community/marin/pull/5446"},
      {"NVIDIA H200", {9, 0}, "https://github.com/NVIDIA/mig-parted/issues/120"},
      {"NVIDIA GeForce RTX 4090 Laptop GPU", {8, 9}, "https://github.com/allenai/open-instruct/issues/1160"},
      {"NVIDIA GeForce RTX 4050 Laptop GPU",
       {8, 9},
       "https://github.com/zzc0721/torch-performance-test-data/issues/139"},
      {"NVIDIA GeForce RTX 5050 Laptop GPU",
       {12, 0},
       "https://github.com/zzc0721/torch-performance-test-data/issues/37"},
      {"NVIDIA GeForce RTX 5060 Laptop GPU",
       {12, 0},
       "https://github.com/zzc0721/torch-performance-test-data/issues/48"},
      {"NVIDIA GeForce RTX 3050 Laptop GPU",
       {8, 6},
       "https://github.com/zzc0721/torch-performance-test-data/issues/57"},
      {"NVIDIA GeForce RTX 4060 Laptop GPU", {8, 9}, "https://github.com/luolangaga/tubatoolsPlugin/pull/724"},
      {"NVIDIA GeForce RTX 5090 Laptop GPU", {12, 0}, "https://github.com/akash-network/provider-configs/pull/89"},
      {"NVIDIA RTX 5000 Ada Generation Laptop GPU",
       {8, 9},
       "https://github.com/ryujaehun/pytorch-gpu-benchmark/pull/26"},
      {"NVIDIA H100 PCIe", {9, 0}, "https://github.com/neuralinternet/SN27/pull/296"},
      {"NVIDIA-H100-80GB-HBM3",
       {9, 0},
       "https://github.com/NVIDIA/k8s-device-plugin/blob/main/internal/lm/resource.go"},
      {"NVIDIA-A30", {8, 0}, "https://github.com/NVIDIA/k8s-device-plugin/blob/main/internal/lm/resource.go"},
      {"NVIDIA-A100-SXM4-80GB",
       {8, 0},
       "https://github.com/NVIDIA/k8s-device-plugin/blob/main/internal/lm/resource.go"},
      {"NVIDIA-A100-SXM4-40GB",
       {8, 0},
       "https://github.com/NVIDIA/k8s-device-plugin/blob/main/internal/lm/resource.go"},
      {"NVIDIA-A100-SXM4-40GB-MIG-3g.20gb",
       {8, 0},
       "https://github.com/NVIDIA/k8s-device-plugin/blob/main/internal/lm/resource.go"},
      {"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
       {8, 0},
       "https://github.com/NVIDIA/k8s-device-plugin/blob/main/internal/lm/resource.go"},
      {"A100-SXM4-40GB", {8, 0}, "https://github.com/NVIDIA/k8s-device-plugin/blob/main/internal/lm/resource.go"},
      {"Tesla-T4", {7, 5}, "https://github.com/NVIDIA/k8s-device-plugin/blob/main/internal/lm/resource.go"},
      {"NVIDIA A100-SXM4-80GB", {8, 0}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA A30", {8, 0}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA A40", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA GeForce RTX 3070", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA GeForce RTX 3080", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA GeForce RTX 3080 Ti", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA GeForce RTX 3090 Ti", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA GeForce RTX 4070 Ti", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA GeForce RTX 4080", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA GeForce RTX 4080 SUPER", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA GeForce RTX 5080", {12, 0}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA L4", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA L40", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA L40S", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX 2000 Ada Generation", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX 4000 Ada Generation", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX 4000 SFF Ada Generation", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX 5000 Ada Generation", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX 6000 Ada Generation", {8, 9}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX A2000", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX A4000", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX A4500", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"NVIDIA RTX A6000", {8, 6}, "https://docs.runpod.io/references/gpu-types.md"},
      {"Tesla V100-FHHL-16GB", {7, 0}, "https://docs.runpod.io/references/gpu-types.md"},
      {"Tesla V100-PCIE-16GB", {7, 0}, "https://docs.runpod.io/references/gpu-types.md"},
      {"Tesla T4", {7, 5}, "https://github.com/NVIDIA/nvidia-docker/issues/1628"},
      {"NVIDIA A10G", {8, 6}, "https://github.com/NVIDIA/k8s-device-plugin/issues/344"},
      {"GeForce GTX 1060 3GB", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 1060 6GB", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 1060 5GB", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 1060", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 1060 with Max-Q Design", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 1050 Ti", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 1050", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 1080 with Max-Q Design", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 1070 with Max-Q Design", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"P106-100", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"P106-090", {6, 1}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 650 Ti", {3, 0}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"GeForce GTX 770M", {3, 0}, "https://github.com/LibreELEC/LibreELEC.tv/pull/4055"},
      {"Tesla PG500-216", {7, 0}, "https://github.com/akash-network/provider-configs/pull/90"},
      {"Tesla V100-SXM2...", {7, 0}, "https://github.com/Wan-Video/Wan2.1/issues/5"},
      {"Quadro P400", {6, 1}, "https://github.com/DualCoder/vgpu_unlock/issues/30"},
      {"Quadro M1000M", {5, 0}, "https://github.com/NVIDIA/nvidia-docker/issues/688"},
      {"GeForce RTX 2080 Ti", {7, 5}, "https://github.com/arutar/FrankenDriver/issues/30"},
      {"Tesla M40", {5, 2}, "https://github.com/DualCoder/vgpu_unlock/issues/62"},
      {"NVIDIA_A100-SXM4-80GB",
       {8, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_A100_80GB_PCIe",
       {8, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_A800-SXM4-80GB",
       {8, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_A10",
       {8, 6},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_H100_80GB_HBM3",
       {9, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_H100",
       {9, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_H100_PCIe",
       {9, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_H100_NVL",
       {9, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_H200",
       {9, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_H20",
       {9, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_H20-3e",
       {9, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_H800",
       {9, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_B200",
       {10, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_GB200",
       {10, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_GB10",
       {12, 1},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_L4",
       {8, 9},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_L40S",
       {8, 9},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_L20",
       {8, 9},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_GeForce_RTX_4090",
       {8, 9},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_GeForce_RTX_4090_D",
       {8, 9},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_GeForce_RTX_2080_Ti",
       {7, 5},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_GeForce_RTX_5090",
       {12, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
      {"NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition",
       {12, 0},
       "https://github.com/vllm-project/vllm/tree/main/vllm/model_executor/layers/fused_moe/configs"},
  };
  return names;
}

TEST(GpuNames, EveryNameToolsPrintResolvesToItsComputeCapability) {
  ASSERT_GE(printed_names().size(), 120u);
  for (const Printed& p : printed_names()) {
    SCOPED_TRACE(std::string(p.name) + " (seen at " + std::string(p.source) + ")");
    const auto gpu = find_gpu(p.name);
    ASSERT_TRUE(gpu.has_value()) << gpu.error().message << " (suggestion '" << gpu.error().suggestion << "')";
    EXPECT_EQ(gpu->cc, p.cc) << gpu->name;
  }
}

// Every physical GPU name of NVIDIA/open-gpu-kernel-modules
// src/nvidia/generated/g_nv_name_released.h (595.45.04, Turing and later);
// the CC is the chip family's (pci.ids names each device's chip). Left out:
// the Turing cloud board that table also calls "NVIDIA GeForce GTX 1060"
// (the Pascal card keeps the name, 6.1) and "NVIDIA DRIVE P2021" (no CC).
TEST(GpuNames, EveryNameOfTheDriversNameTableResolves) {
  const std::vector<std::pair<std::string_view, ComputeCapability>> names = {
      {"NVIDIA A10", {8, 6}},
      {"NVIDIA A100 80GB PCIe", {8, 0}},
      {"NVIDIA A100-PCIE-40GB", {8, 0}},
      {"NVIDIA A100-PG509-200", {8, 0}},
      {"NVIDIA A100-SXM-64GB", {8, 0}},
      {"NVIDIA A100-SXM4-40GB", {8, 0}},
      {"NVIDIA A100-SXM4-80GB", {8, 0}},
      {"NVIDIA A10G", {8, 6}},
      {"NVIDIA A10M", {8, 6}},
      {"NVIDIA A16", {8, 6}},
      {"NVIDIA A2", {8, 6}},
      {"NVIDIA A30", {8, 0}},
      {"NVIDIA A40", {8, 6}},
      {"NVIDIA A800 40GB Active", {8, 0}},
      {"NVIDIA A800 80GB PCIe", {8, 0}},
      {"NVIDIA A800 80GB PCIe LC", {8, 0}},
      {"NVIDIA A800-SXM4-40GB", {8, 0}},
      {"NVIDIA A800-SXM4-80GB", {8, 0}},
      {"NVIDIA AX800", {8, 0}},
      {"NVIDIA B200", {10, 0}},
      {"NVIDIA B300 SXM6 AC", {10, 3}},
      {"NVIDIA CMP 30HX", {7, 5}},
      {"NVIDIA CMP 40HX", {7, 5}},
      {"NVIDIA CMP 50HX", {7, 5}},
      {"NVIDIA CMP 70HX", {8, 6}},
      {"NVIDIA CMP 90HX", {8, 6}},
      {"NVIDIA DGX Display", {7, 5}},
      {"NVIDIA GB10", {12, 1}},
      {"NVIDIA GB200", {10, 0}},
      {"NVIDIA GB300", {10, 3}},
      {"NVIDIA GH200 120GB", {9, 0}},
      {"NVIDIA GH200 144G HBM3e", {9, 0}},
      {"NVIDIA GH200 480GB", {9, 0}},
      {"NVIDIA GeForce GTX 1630", {7, 5}},
      {"NVIDIA GeForce GTX 1650", {7, 5}},
      {"NVIDIA GeForce GTX 1650 SUPER", {7, 5}},
      {"NVIDIA GeForce GTX 1650 Ti", {7, 5}},
      {"NVIDIA GeForce GTX 1650 Ti with Max-Q Design", {7, 5}},
      {"NVIDIA GeForce GTX 1650 with Max-Q Design", {7, 5}},
      {"NVIDIA GeForce GTX 1660", {7, 5}},
      {"NVIDIA GeForce GTX 1660 SUPER", {7, 5}},
      {"NVIDIA GeForce GTX 1660 Ti", {7, 5}},
      {"NVIDIA GeForce GTX 1660 Ti with Max-Q Design", {7, 5}},
      {"NVIDIA GeForce MX450", {7, 5}},
      {"NVIDIA GeForce MX550", {7, 5}},
      {"NVIDIA GeForce MX570", {8, 6}},
      {"NVIDIA GeForce MX570 A", {8, 6}},
      {"NVIDIA GeForce RTX 2050", {8, 6}},
      {"NVIDIA GeForce RTX 2060", {7, 5}},
      {"NVIDIA GeForce RTX 2060 SUPER", {7, 5}},
      {"NVIDIA GeForce RTX 2060 with Max-Q Design", {7, 5}},
      {"NVIDIA GeForce RTX 2070", {7, 5}},
      {"NVIDIA GeForce RTX 2070 SUPER", {7, 5}},
      {"NVIDIA GeForce RTX 2070 Super", {7, 5}},
      {"NVIDIA GeForce RTX 2070 Super with Max-Q Design", {7, 5}},
      {"NVIDIA GeForce RTX 2070 with Max-Q Design", {7, 5}},
      {"NVIDIA GeForce RTX 2080", {7, 5}},
      {"NVIDIA GeForce RTX 2080 SUPER", {7, 5}},
      {"NVIDIA GeForce RTX 2080 Super", {7, 5}},
      {"NVIDIA GeForce RTX 2080 Super with Max-Q Design", {7, 5}},
      {"NVIDIA GeForce RTX 2080 Ti", {7, 5}},
      {"NVIDIA GeForce RTX 2080 with Max-Q Design", {7, 5}},
      {"NVIDIA GeForce RTX 3050", {8, 6}},
      {"NVIDIA GeForce RTX 3050 4GB Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3050 6GB Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3050 A Laptop GPU", {8, 9}},
      {"NVIDIA GeForce RTX 3050 Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3050 OEM", {8, 6}},
      {"NVIDIA GeForce RTX 3050 Ti Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3050Ti Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3060", {8, 6}},
      {"NVIDIA GeForce RTX 3060 Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3060 Ti", {8, 6}},
      {"NVIDIA GeForce RTX 3070", {8, 6}},
      {"NVIDIA GeForce RTX 3070 Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3070 Ti", {8, 6}},
      {"NVIDIA GeForce RTX 3070 Ti Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3080", {8, 6}},
      {"NVIDIA GeForce RTX 3080 Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3080 Ti", {8, 6}},
      {"NVIDIA GeForce RTX 3080 Ti Laptop GPU", {8, 6}},
      {"NVIDIA GeForce RTX 3090", {8, 6}},
      {"NVIDIA GeForce RTX 3090 Ti", {8, 6}},
      {"NVIDIA GeForce RTX 4050 Laptop GPU", {8, 9}},
      {"NVIDIA GeForce RTX 4060", {8, 9}},
      {"NVIDIA GeForce RTX 4060 Laptop GPU", {8, 9}},
      {"NVIDIA GeForce RTX 4060 Ti", {8, 9}},
      {"NVIDIA GeForce RTX 4070", {8, 9}},
      {"NVIDIA GeForce RTX 4070 Laptop GPU", {8, 9}},
      {"NVIDIA GeForce RTX 4070 SUPER", {8, 9}},
      {"NVIDIA GeForce RTX 4070 Ti", {8, 9}},
      {"NVIDIA GeForce RTX 4070 Ti SUPER", {8, 9}},
      {"NVIDIA GeForce RTX 4080", {8, 9}},
      {"NVIDIA GeForce RTX 4080 Laptop GPU", {8, 9}},
      {"NVIDIA GeForce RTX 4080 SUPER", {8, 9}},
      {"NVIDIA GeForce RTX 4090", {8, 9}},
      {"NVIDIA GeForce RTX 4090 D", {8, 9}},
      {"NVIDIA GeForce RTX 4090 Laptop GPU", {8, 9}},
      {"NVIDIA GeForce RTX 5050", {12, 0}},
      {"NVIDIA GeForce RTX 5050 Laptop GPU", {12, 0}},
      {"NVIDIA GeForce RTX 5060", {12, 0}},
      {"NVIDIA GeForce RTX 5060 Laptop GPU", {12, 0}},
      {"NVIDIA GeForce RTX 5060 Ti", {12, 0}},
      {"NVIDIA GeForce RTX 5070", {12, 0}},
      {"NVIDIA GeForce RTX 5070 Laptop GPU", {12, 0}},
      {"NVIDIA GeForce RTX 5070 Ti", {12, 0}},
      {"NVIDIA GeForce RTX 5070 Ti Laptop GPU", {12, 0}},
      {"NVIDIA GeForce RTX 5080", {12, 0}},
      {"NVIDIA GeForce RTX 5080 Laptop GPU", {12, 0}},
      {"NVIDIA GeForce RTX 5090", {12, 0}},
      {"NVIDIA GeForce RTX 5090 D", {12, 0}},
      {"NVIDIA GeForce RTX 5090 D v2", {12, 0}},
      {"NVIDIA GeForce RTX 5090 Laptop GPU", {12, 0}},
      {"NVIDIA H100", {9, 0}},
      {"NVIDIA H100 80GB HBM3", {9, 0}},
      {"NVIDIA H100 NVL", {9, 0}},
      {"NVIDIA H100 PCIe", {9, 0}},
      {"NVIDIA H20", {9, 0}},
      {"NVIDIA H20 NVL16", {9, 0}},
      {"NVIDIA H20-3e", {9, 0}},
      {"NVIDIA H200", {9, 0}},
      {"NVIDIA H200 NVL", {9, 0}},
      {"NVIDIA H800", {9, 0}},
      {"NVIDIA H800 NVL", {9, 0}},
      {"NVIDIA H800 PCIe", {9, 0}},
      {"NVIDIA L2", {8, 9}},
      {"NVIDIA L20", {8, 9}},
      {"NVIDIA L4", {8, 9}},
      {"NVIDIA L40", {8, 9}},
      {"NVIDIA L40S", {8, 9}},
      {"NVIDIA PG506-232", {8, 0}},
      {"NVIDIA PG509-210", {8, 0}},
      {"NVIDIA RTX 1000 Ada Generation Laptop GPU", {8, 9}},
      {"NVIDIA RTX 2000 Ada Generation", {8, 9}},
      {"NVIDIA RTX 2000 Ada Generation Embedded GPU", {8, 9}},
      {"NVIDIA RTX 2000 Ada Generation Laptop GPU", {8, 9}},
      {"NVIDIA RTX 2000E Ada Generation", {8, 9}},
      {"NVIDIA RTX 3000 Ada Generation Laptop GPU", {8, 9}},
      {"NVIDIA RTX 3500 Ada Generation Embedded GPU", {8, 9}},
      {"NVIDIA RTX 3500 Ada Generation Laptop GPU", {8, 9}},
      {"NVIDIA RTX 4000 Ada Generation", {8, 9}},
      {"NVIDIA RTX 4000 Ada Generation Laptop GPU", {8, 9}},
      {"NVIDIA RTX 4000 SFF Ada Generation", {8, 9}},
      {"NVIDIA RTX 4500 Ada Generation", {8, 9}},
      {"NVIDIA RTX 500 Ada Generation Laptop GPU", {8, 9}},
      {"NVIDIA RTX 5000 Ada Generation", {8, 9}},
      {"NVIDIA RTX 5000 Ada Generation Embedded GPU", {8, 9}},
      {"NVIDIA RTX 5000 Ada Generation Laptop GPU", {8, 9}},
      {"NVIDIA RTX 5880 Ada Generation", {8, 9}},
      {"NVIDIA RTX 6000 Ada Generation", {8, 9}},
      {"NVIDIA RTX 6000D", {12, 0}},
      {"NVIDIA RTX A1000", {8, 6}},
      {"NVIDIA RTX A1000 6GB Laptop GPU", {8, 6}},
      {"NVIDIA RTX A1000 Embedded GPU", {8, 6}},
      {"NVIDIA RTX A1000 Laptop GPU", {8, 6}},
      {"NVIDIA RTX A2000", {8, 6}},
      {"NVIDIA RTX A2000 12GB", {8, 6}},
      {"NVIDIA RTX A2000 8GB Laptop GPU", {8, 6}},
      {"NVIDIA RTX A2000 Embedded GPU", {8, 6}},
      {"NVIDIA RTX A2000 Laptop GPU", {8, 6}},
      {"NVIDIA RTX A3000 12GB Laptop GPU", {8, 6}},
      {"NVIDIA RTX A3000 Laptop GPU", {8, 6}},
      {"NVIDIA RTX A400", {8, 6}},
      {"NVIDIA RTX A4000", {8, 6}},
      {"NVIDIA RTX A4000 Laptop GPU", {8, 6}},
      {"NVIDIA RTX A4000H", {8, 6}},
      {"NVIDIA RTX A4500", {8, 6}},
      {"NVIDIA RTX A4500 Embedded GPU", {8, 6}},
      {"NVIDIA RTX A4500 Laptop GPU", {8, 6}},
      {"NVIDIA RTX A500 Embedded GPU", {8, 6}},
      {"NVIDIA RTX A500 Laptop GPU", {8, 6}},
      {"NVIDIA RTX A5000", {8, 6}},
      {"NVIDIA RTX A5000 Laptop GPU", {8, 6}},
      {"NVIDIA RTX A5500", {8, 6}},
      {"NVIDIA RTX A5500 Laptop GPU", {8, 6}},
      {"NVIDIA RTX A6000", {8, 6}},
      {"NVIDIA RTX PRO 1000 Blackwell Generation Laptop GPU", {12, 0}},
      {"NVIDIA RTX PRO 2000 Blackwell", {12, 0}},
      {"NVIDIA RTX PRO 2000 Blackwell Embedded GPU", {12, 0}},
      {"NVIDIA RTX PRO 2000 Blackwell Generation Laptop GPU", {12, 0}},
      {"NVIDIA RTX PRO 3000 Blackwell Generation Laptop GPU", {12, 0}},
      {"NVIDIA RTX PRO 4000 Blackwell", {12, 0}},
      {"NVIDIA RTX PRO 4000 Blackwell Embedded GPU", {12, 0}},
      {"NVIDIA RTX PRO 4000 Blackwell Generation Laptop GPU", {12, 0}},
      {"NVIDIA RTX PRO 4000 Blackwell SFF Edition", {12, 0}},
      {"NVIDIA RTX PRO 4500 Blackwell", {12, 0}},
      {"NVIDIA RTX PRO 500 Blackwell Embedded GPU", {12, 0}},
      {"NVIDIA RTX PRO 500 Blackwell Generation Laptop GPU", {12, 0}},
      {"NVIDIA RTX PRO 5000 72GB Blackwell", {12, 0}},
      {"NVIDIA RTX PRO 5000 Blackwell", {12, 0}},
      {"NVIDIA RTX PRO 5000 Blackwell Embedded GPU", {12, 0}},
      {"NVIDIA RTX PRO 5000 Blackwell Generation Laptop GPU", {12, 0}},
      {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", {12, 0}},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", {12, 0}},
      {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", {12, 0}},
      {"NVIDIA T1000", {7, 5}},
      {"NVIDIA T1000 8GB", {7, 5}},
      {"NVIDIA T1200 Laptop GPU", {7, 5}},
      {"NVIDIA T400", {7, 5}},
      {"NVIDIA T400 4GB", {7, 5}},
      {"NVIDIA T400E", {7, 5}},
      {"NVIDIA T500", {7, 5}},
      {"NVIDIA T550 Laptop GPU", {7, 5}},
      {"NVIDIA T600", {7, 5}},
      {"NVIDIA T600 Laptop GPU", {7, 5}},
      {"NVIDIA TITAN RTX", {7, 5}},
      {"Quadro RTX 3000", {7, 5}},
      {"Quadro RTX 3000 with Max-Q Design", {7, 5}},
      {"Quadro RTX 4000", {7, 5}},
      {"Quadro RTX 4000 with Max-Q Design", {7, 5}},
      {"Quadro RTX 5000", {7, 5}},
      {"Quadro RTX 5000 with Max-Q Design", {7, 5}},
      {"Quadro RTX 6000", {7, 5}},
      {"Quadro RTX 8000", {7, 5}},
      {"Quadro T1000", {7, 5}},
      {"Quadro T1000 with Max-Q Design", {7, 5}},
      {"Quadro T2000", {7, 5}},
      {"Quadro T2000 with Max-Q Design", {7, 5}},
      {"Tesla T4", {7, 5}},
  };
  for (const auto& [name, cc] : names) {
    SCOPED_TRACE(name);
    const auto gpu = find_gpu(name);
    ASSERT_TRUE(gpu.has_value()) << gpu.error().message;
    EXPECT_EQ(gpu->cc, cc) << gpu->name;
  }
}

}  // namespace
}  // namespace orc::arch

namespace orc::arch {
namespace {

std::string suggestion_for(std::string_view name) {
  const auto gpu = find_gpu(name);
  return gpu ? "(resolves to " + std::string(gpu->name) + ")" : gpu.error().suggestion;
}

// Issue 13: did-you-mean offered products of other generations for names it
// could not place ("NVIDIA A10G" -> "A100", "H20" -> "Tesla K20", "4090" ->
// "Quadro P400", "sm_90" -> "Tesla M40"). The first two now resolve; a
// suggestion comes only from the query's family (series letters and the
// first digit of the model number), and a bare model number finds the
// product carrying it.
TEST(GpuNames, DidYouMeanStaysInTheQuerysFamily) {
  EXPECT_EQ(find_gpu("NVIDIA A10G")->cc, (ComputeCapability{8, 6}));
  EXPECT_EQ(find_gpu("H20")->cc, (ComputeCapability{9, 0}));
  EXPECT_EQ(suggestion_for("4090"), "GeForce RTX 4090");
  EXPECT_EQ(suggestion_for("5090"), "GeForce RTX 5090");
  EXPECT_EQ(suggestion_for("sm_90"), "");
  EXPECT_EQ(suggestion_for("H30"), "");
  EXPECT_EQ(suggestion_for("K21"), "Tesla K20");
  // An unknown A10 board gets a product of its own series and generation.
  EXPECT_EQ(find_gpu(suggestion_for("NVIDIA A10X"))->architecture, "Ampere");
  EXPECT_EQ(suggestion_for("RTX 3095"), "GeForce RTX 3090");
  // "NVIDIA Graphics Device" is what the driver prints for a device its
  // table lacks: unknown, and nothing to offer.
  EXPECT_EQ(suggestion_for("NVIDIA Graphics Device"), "");
}

// Names that a loose match would confuse resolve to their own product.
TEST(GpuNames, ConfusablePairsStayApart) {
  const std::vector<std::pair<std::string_view, ComputeCapability>> names = {
      {"NVIDIA A10G", {8, 6}},
      {"NVIDIA A100-SXM4-40GB", {8, 0}},
      {"NVIDIA H20", {9, 0}},
      {"Tesla K20", {3, 5}},
      {"NVIDIA L2", {8, 9}},
      {"NVIDIA L20", {8, 9}},
      {"NVIDIA GeForce RTX 2050", {8, 6}},
      {"NVIDIA GeForce RTX 2060", {7, 5}},
      {"NVIDIA GeForce RTX 3050 A Laptop GPU", {8, 9}},
      {"NVIDIA GeForce RTX 3050 Laptop GPU", {8, 6}},
      {"Quadro RTX 6000", {7, 5}},
      {"NVIDIA RTX 6000D", {12, 0}},
      {"NVIDIA RTX A6000", {8, 6}},
      {"NVIDIA RTX 6000 Ada Generation", {8, 9}},
  };
  for (const auto& [name, cc] : names) {
    SCOPED_TRACE(name);
    const auto gpu = find_gpu(name);
    ASSERT_TRUE(gpu.has_value()) << gpu.error().message;
    EXPECT_EQ(gpu->cc, cc) << gpu->name;
  }
  EXPECT_NE(find_gpu("NVIDIA L2")->name, find_gpu("NVIDIA L20")->name);
  EXPECT_NE(find_gpu("NVIDIA GeForce RTX 4090 D")->name, find_gpu("NVIDIA GeForce RTX 4090")->name);
}

}  // namespace
}  // namespace orc::arch
