"""Where candidate code runs: the sandbox (zygote and workers), the worker's request loop, the wire
between them and the Nsight Compute child."""
