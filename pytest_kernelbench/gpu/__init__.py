"""Measurement on the device: device locks and placement, the timing engine, kernel names from CUDA
graphs and CUPTI, stream-order trials and the roofline."""
