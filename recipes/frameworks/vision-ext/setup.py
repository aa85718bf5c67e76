# A minimal PyTorch CUDA extension: `python setup.py bdist_wheel` compiles
# vision_ext.cu for the archs in TORCH_CUDA_ARCH_LIST (set by orchestrate
# from the tier) and packs the module into dist/*.whl.
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="vision_ext",
    version="0.1.0",
    ext_modules=[CUDAExtension("vision_ext", ["vision_ext.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
