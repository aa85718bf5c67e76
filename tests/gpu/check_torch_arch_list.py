#!/usr/bin/env python3
"""Cross-checks orchestrate's TORCH_CUDA_ARCH_LIST against PyTorch itself.

For every plan in `orchestrate plan --json` output that sets
TORCH_CUDA_ARCH_LIST, asks PyTorch's extension builder
(torch.utils.cpp_extension._get_cuda_arch_flags) to expand the value and
compares the resulting (arch, code) pairs with the plan's nvcc_flags.

Exit 0: all agree. Exit 1: a disagreement. Exit 77: PyTorch is not
installed here (ctest reports the test as skipped, with this reason).
"""
import json
import os
import re
import sys

PAIR = re.compile(r"arch=(compute_\w+),code=\[?([\w,]+)\]?")


def pairs(flags):
    out = set()
    for flag in flags:
        m = PAIR.search(flag)
        if not m:
            raise ValueError(f"not a -gencode flag: {flag}")
        for code in m.group(2).split(","):
            out.add((m.group(1), code))
    return out


def main():
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError as e:
        print(f"skipped: PyTorch is not installed here ({e}); run this on the GPU host")
        return 77
    plans = json.load(open(sys.argv[1]))["plans"]
    failures = 0
    checked = 0
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}")
    for plan in plans:
        value = plan.get("env", {}).get("TORCH_CUDA_ARCH_LIST")
        if value is None:
            continue
        os.environ["TORCH_CUDA_ARCH_LIST"] = value
        theirs = pairs(cpp_extension._get_cuda_arch_flags())
        ours = pairs(plan["nvcc_flags"])
        checked += 1
        verdict = "same" if theirs == ours else "DIFFERENT"
        print(f"{plan['tier']:<18} TORCH_CUDA_ARCH_LIST={value:<34} torch: {len(theirs)} targets, ours: {len(ours)}: {verdict}")
        if theirs != ours:
            failures += 1
            print(f"    only torch: {sorted(theirs - ours)}")
            print(f"    only ours:  {sorted(ours - theirs)}")
    if checked == 0:
        print("no plan sets TORCH_CUDA_ARCH_LIST")
        return 1
    print(f"{checked - failures}/{checked} plans agree with PyTorch's expansion")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
