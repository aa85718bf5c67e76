# Reads TF_CUDA_COMPUTE_CAPABILITIES, CUDA_HOME and HERMETIC_CUDA_VERSION
# from the repository environment (the shell's, or --repo_env) as
# TensorFlow's cuda_configure does (repository_ctx.os.environ), but without
# listing them in `environ`, as TensorFlow's rules did before bazel could
# re-run a rule on their change (tensorflow/tensorflow#5253, PR #10318): so
# bazel keeps the repository it made first until `bazel clean --expunge`.
# TF_CUDA_COMPUTE_CAPABILITIES as TensorFlow reads it: sm_XY is SASS only,
# compute_XY SASS and PTX.
def _gencode(caps):
    flags = []
    for cap in caps.split(","):
        digits = cap.replace("sm_", "").replace("compute_", "").replace(".", "")
        flags.append("-gencode=arch=compute_%s,code=sm_%s" % (digits, digits))
        if cap.startswith("compute_"):
            flags.append("-gencode=arch=compute_%s,code=compute_%s" % (digits, digits))
    return " ".join(flags)

def _impl(ctx):
    env = ctx.os.environ
    caps = env.get("TF_CUDA_COMPUTE_CAPABILITIES", "")
    cuda = env.get("CUDA_HOME", "/usr/local/cuda")
    hermetic = env.get("HERMETIC_CUDA_VERSION", "")
    print("cuda_configure: TF_CUDA_COMPUTE_CAPABILITIES=%s HERMETIC_CUDA_VERSION=%s" % (caps, hermetic))
    ctx.file("BUILD", 'exports_files(["cuda.bzl"])\n')
    ctx.file("cuda.bzl", "GENCODE = %r\nNVCC = %r\nHERMETIC_CUDA_VERSION = %r\n" % (_gencode(caps), cuda + "/bin/nvcc", hermetic))

cuda_configure = repository_rule(implementation = _impl)
