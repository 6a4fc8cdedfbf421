"""Which GPU kernels a candidate launched: its own, or only PyTorch's and its libraries'.

Generated kernels often wrap their build in try/except and fall back to PyTorch, then report
success. The worker records the kernel names one call launches (torch.profiler); a candidate
whose kernels all come from ATen, cuBLAS, cuDNN or CUTLASS is `torch_only`.
"""

from __future__ import annotations

import re

LIBRARY_KERNEL = re.compile(
    r"at::native|at::cuda|at_cuda_detail|c10::|cutlass|cublas|cudnn|cunn_|xmma|nvjet|"
    r"^(void )?(sm\d+_|ampere_|hopper_|volta_|turing_|maxwell_)|gemv|gemmk|gemmSN|splitKreduce|"
    r"implicit_convolve|cudnn|conv2d_grouped|fft|cub::|thrust::|Memcpy|Memset|"
    r"flash_fwd|fmha|pytorch_flash|nchwToNhwc|nhwcToNchw|scalePackedTensor|winograd|"
    r"elementwise_kernel|reduce_kernel|vectorized_|unrolled_|kernel_launch_wrapper"
)


def custom_kernels(candidate: list[str], baseline: list[str]) -> list[str]:
    """Kernels the candidate launched that neither the baseline nor PyTorch's libraries launch."""
    known = set(baseline)
    return [name for name in candidate if name not in known and not LIBRARY_KERNEL.search(name)]


def launched_kernels(model, inputs: list, device: str) -> list[str]:
    """Names of the GPU kernels one forward call launches (after one warm call)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from pytest_kernelbench.timing import forward_async

    def call() -> None:
        forward_async(model, inputs)
        torch.cuda.synchronize(device)

    call()  # lazy builds and autotuning stay out of the profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
    names = {event.name for event in prof.events()
             if event.device_type == torch.autograd.DeviceType.CUDA}
    return sorted(names)
