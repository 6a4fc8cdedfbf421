"""Builds of candidates' extensions: content-addressed build folders, the run's build pool, and the
build process with its stand-ins for the GPU."""
