"""Which part of the confinement a CUDA process needs: each variant forks a child, confines it,
then initialises CUDA, shares a tensor over CUDA IPC and runs a kernel; prints what failed.

    python benchmarks/confine_probe.py ["landlock, read all" "landlock, abi 5" ...]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

from pytest_kernelbench import confine


def attempt(variant: str) -> dict:
    import torch

    scratch = Path(tempfile.mkdtemp(prefix="kb-probe-"))
    policy = confine.policy_for(None, None, scratch, None, [])
    if variant == "landlock only":
        policy = confine.Policy(**{**policy.__dict__, "network": True})
    applied = None
    abi = confine.landlock_abi()
    everything = ("/",)
    if variant == "namespace only":
        applied = confine._private_network([])
    elif variant == "no_new_privs only":
        import ctypes
        applied = ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)
    elif variant == "landlock, all allowed":
        confine._landlock(confine.Policy(everything, everything, scratch=str(scratch)), abi)
    elif variant == "landlock, read all":
        confine._landlock(confine.Policy(everything, policy.write, scratch=str(scratch)), abi)
    elif variant == "landlock, write all":
        confine._landlock(confine.Policy(policy.read, everything, scratch=str(scratch)), abi)
    elif variant.startswith("landlock, write +"):  # e.g. "landlock, write +/dev +/proc"
        extra = tuple(word[1:] for word in variant.split()[2:])
        confine._landlock(confine.Policy(policy.read, (*policy.write, *extra),
                                         scratch=str(scratch)), abi)
    elif variant.startswith("landlock, abi "):
        confine._landlock(policy, int(variant.rsplit(" ", 1)[1]))
    elif variant != "none":
        applied = confine.enter(policy).describe()
    x = torch.arange(8.0, device="cuda") * 2
    torch.cuda.synchronize()
    handle = x.untyped_storage()._share_cuda_()
    return {"applied": applied, "sum": float(x.sum()), "ipc": bool(handle)}


def main() -> int:
    import torch  # noqa: F401 - imported before any fork, as the zygote does

    variants = sys.argv[1:] or ["none", "namespace only", "landlock only", "full"]
    for variant in variants:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                result = {"ok": True, **attempt(variant)}
            except BaseException as exc:  # noqa: BLE001 - report whatever failed
                result = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                          "trace": traceback.format_exc()[-1500:]}
            os.write(write_end, json.dumps(result).encode())
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end) as pipe:
            print(variant, "->", pipe.read())
        os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
